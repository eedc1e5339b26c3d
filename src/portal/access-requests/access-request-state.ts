export const ACCESS_REQUEST_STATUSES = ['pending', 'approved', 'rejected'] as const;
export type AccessRequestStatus = (typeof ACCESS_REQUEST_STATUSES)[number];

/** The statuses a caller may ask for (PUT .../approve, PUT .../reject, PATCH {Status}). */
export const TARGET_STATUSES = ['approved', 'rejected'] as const;
export type TargetStatus = (typeof TARGET_STATUSES)[number];

export type TransitionPlan =
  | { kind: 'noop' }
  | { kind: 'conflict'; message: string }
  | {
      kind: 'apply';
      event: 'AccessRequestApproved' | 'AccessRequestRejected';
      issueCredentials: boolean;
      revokeCredentials: boolean;
    };

/**
 * The access-request state machine:
 * pending→approved (issues credentials), pending→rejected, approved→rejected (revokes credentials).
 * Asking for the status a request already has changes nothing; anything else is a conflict.
 */
export function planTransition(from: AccessRequestStatus, to: TargetStatus): TransitionPlan {
  if (from === to) return { kind: 'noop' };
  if (from === 'pending' && to === 'approved') {
    return { kind: 'apply', event: 'AccessRequestApproved', issueCredentials: true, revokeCredentials: false };
  }
  if (to === 'rejected' && (from === 'pending' || from === 'approved')) {
    return {
      kind: 'apply',
      event: 'AccessRequestRejected',
      issueCredentials: false,
      revokeCredentials: from === 'approved',
    };
  }
  return { kind: 'conflict', message: `access request is ${from} and cannot become ${to}` };
}
