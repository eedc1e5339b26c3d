import { isIP } from 'node:net';
import { AddressGuard } from './send/address-guard';

// Names that always mean this machine, whatever the resolver says.
const LOOPBACK_NAME = /^(localhost|.+\.localhost)\.?$/i;
const LOOPBACK_ADDRESSES = ['127.0.0.1', '::1'];

/**
 * Warnings for a webhook URL that the delivery guard would refuse under the current configuration, so
 * a subscriber learns it when registering rather than from a log of `blocked_address` failures.
 * Only what is certain without a network lookup is reported: IP literals and localhost names. Other
 * hostnames are judged on every connection, after DNS, since what they resolve to can change.
 */
export function targetWarnings(url: string, guard: AddressGuard): string[] {
  let host: string;
  try {
    host = new URL(url).hostname.replace(/^\[|\]$/g, '');
  } catch {
    return [];
  }
  const addresses = isIP(host) ? [host] : LOOPBACK_NAME.test(host) ? LOOPBACK_ADDRESSES : [];
  if (addresses.length === 0 || addresses.some((a) => guard.isAllowed(a))) return [];
  return [
    `URL points to ${addresses.join(' / ')}, a non-public address that WEBHOOK_ALLOWED_CIDRS does not allow: ` +
      'every delivery will fail as blocked_address until the service is configured to allow it',
  ];
}
