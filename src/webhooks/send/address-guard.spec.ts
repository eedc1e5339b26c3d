import { AddressGuard, BlockedAddressError } from './address-guard';

describe('AddressGuard', () => {
  const closed = new AddressGuard([]);
  const loopback = new AddressGuard(['127.0.0.0/8', '::1/128']);

  it('allows public unicast addresses', () => {
    for (const a of ['8.8.8.8', '1.1.1.1', '2606:4700:4700::1111']) expect(closed.isAllowed(a)).toBe(true);
  });

  it('blocks loopback, private, link-local, unique-local, multicast, unspecified and mapped forms by default', () => {
    for (const a of [
      '127.0.0.1',
      '10.1.2.3',
      '172.16.0.1',
      '192.168.1.1',
      '169.254.169.254',
      '100.64.0.1',
      '0.0.0.0',
      '224.0.0.1',
      '::1',
      'fe80::1',
      'fc00::1',
      '::',
      '::ffff:127.0.0.1',
      '::ffff:10.0.0.1',
      'not-an-ip',
    ]) {
      expect([a, closed.isAllowed(a)]).toEqual([a, false]);
    }
  });

  it('opens exactly the ranges of the allow-list', () => {
    expect(loopback.isAllowed('127.0.0.1')).toBe(true);
    expect(loopback.isAllowed('127.9.9.9')).toBe(true);
    expect(loopback.isAllowed('::1')).toBe(true);
    expect(loopback.isAllowed('::ffff:127.0.0.1')).toBe(true);
    expect(loopback.isAllowed('10.0.0.1')).toBe(false);
  });

  it('checks after DNS resolution: a name that resolves to loopback is refused', (done) => {
    closed.lookup('localhost', {}, (err) => {
      expect(err).toBeInstanceOf(BlockedAddressError);
      done();
    });
  });

  it('lets an allowed resolution through', (done) => {
    loopback.lookup('localhost', {}, (err, address) => {
      expect(err).toBeNull();
      expect(['127.0.0.1', '::1']).toContain(address);
      done();
    });
  });
});
