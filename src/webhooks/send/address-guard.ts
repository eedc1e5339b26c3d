import { lookup as dnsLookup, LookupAddress } from 'node:dns';
import * as ipaddr from 'ipaddr.js';

export class BlockedAddressError extends Error {
  readonly code = 'E_BLOCKED_ADDRESS';
  constructor(readonly address: string) {
    super(`webhook target resolves to a non-public address (${address}) that WEBHOOK_ALLOWED_CIDRS does not allow`);
  }
}

type Parsed = ipaddr.IPv4 | ipaddr.IPv6;

/**
 * Decides whether a webhook may connect to an address: public unicast addresses always, anything else
 * (loopback, private, link-local, unique-local, multicast, reserved...) only inside the allow-list.
 */
export class AddressGuard {
  private readonly allowed: [Parsed, number][];

  constructor(allowedCidrs: string[]) {
    this.allowed = allowedCidrs.map((c) => ipaddr.parseCIDR(c));
  }

  isAllowed(address: string): boolean {
    let ip: Parsed;
    try {
      ip = ipaddr.parse(address);
    } catch {
      return false;
    }
    if (ip.kind() === 'ipv6' && (ip as ipaddr.IPv6).isIPv4MappedAddress()) ip = (ip as ipaddr.IPv6).toIPv4Address();
    for (const [range, bits] of this.allowed) {
      if (range.kind() === ip.kind() && ip.match(range, bits)) return true;
    }
    return ip.range() === 'unicast';
  }

  /**
   * A `dns.lookup` replacement for the HTTP client: resolves, then refuses addresses that are not allowed,
   * so the check happens on every connection, after DNS (a hostname cannot sneak past).
   */
  lookup = (
    hostname: string,
    options: object,
    callback: (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void,
  ): void => {
    dnsLookup(hostname, { ...options, all: true }, (err, addresses: LookupAddress[]) => {
      if (err) return callback(err, '', 0);
      const ok = addresses.filter((a) => this.isAllowed(a.address));
      if (ok.length === 0) return callback(new BlockedAddressError(addresses[0]?.address ?? hostname), '', 0);
      if ((options as { all?: boolean }).all) return callback(null, ok);
      callback(null, ok[0].address, ok[0].family);
    });
  };
}
