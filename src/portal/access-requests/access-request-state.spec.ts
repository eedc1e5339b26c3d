import { planTransition } from './access-request-state';

describe('access request state machine', () => {
  it('approves a pending request and issues credentials', () => {
    expect(planTransition('pending', 'approved')).toEqual({
      kind: 'apply',
      event: 'AccessRequestApproved',
      issueCredentials: true,
      revokeCredentials: false,
    });
  });

  it('rejects a pending request without touching credentials', () => {
    expect(planTransition('pending', 'rejected')).toEqual({
      kind: 'apply',
      event: 'AccessRequestRejected',
      issueCredentials: false,
      revokeCredentials: false,
    });
  });

  it('rejects an approved request and revokes its credentials', () => {
    expect(planTransition('approved', 'rejected')).toEqual({
      kind: 'apply',
      event: 'AccessRequestRejected',
      issueCredentials: false,
      revokeCredentials: true,
    });
  });

  it('treats the status a request already has as a no-op', () => {
    expect(planTransition('approved', 'approved')).toEqual({ kind: 'noop' });
    expect(planTransition('rejected', 'rejected')).toEqual({ kind: 'noop' });
  });

  it('refuses to approve a rejected request', () => {
    expect(planTransition('rejected', 'approved')).toEqual({
      kind: 'conflict',
      message: 'access request is rejected and cannot become approved',
    });
  });
});
