import { Injectable, Logger } from '@nestjs/common';
import { PinoLogger } from 'nestjs-pino';
import { SecretBox } from '../../common/crypto/secret-box';
import { OpenedSecrets } from './opened-secrets';
import { OpenedKey, openSigningKey, SignatureScheme, signatureHeaders } from './signing';

/** A webhook's keys as stored (sealed): the current one, and the previous one while a rotation's grace period lasts. */
export interface SealedKeySet {
  secretEncrypted: string;
  signatureScheme: SignatureScheme;
  previousSecretEncrypted: string | null;
  previousSignatureScheme: SignatureScheme | null;
}

/**
 * Signs an attempt with the keys its webhook holds when the attempt is sent: the current key, and during
 * a grace period the previous one too, so receivers still holding the old key keep verifying. Keys are
 * decrypted and prepared once per webhook for a minute (OpenedSecrets), not once per attempt.
 */
@Injectable()
export class DeliverySigner {
  private readonly logger = new Logger(DeliverySigner.name);
  /** By scheme and sealed key (`v1:<sealed>`). */
  private readonly opened: OpenedSecrets<OpenedKey>;

  constructor(secrets: SecretBox) {
    this.opened = new OpenedSecrets((k) => {
      const colon = k.indexOf(':');
      const scheme = k.slice(0, colon) as SignatureScheme;
      return openSigningKey({ scheme, secret: secrets.decrypt(k.slice(colon + 1)) });
    });
  }

  headers(keys: SealedKeySet, msgId: string, body: string, now = Date.now()): Record<string, string> {
    const open = this.open(keys);
    // which schemes signed, never the keys or the signatures
    if (debugLogged()) this.logger.debug({ deliveryId: msgId, schemes: open.map((k) => k.scheme) }, 'delivery signed');
    return signatureHeaders(open, msgId, body, now);
  }

  private open(keys: SealedKeySet): OpenedKey[] {
    const open = [this.opened.get(`${keys.signatureScheme}:${keys.secretEncrypted}`)];
    if (keys.previousSecretEncrypted && keys.previousSignatureScheme) {
      open.push(this.opened.get(`${keys.previousSignatureScheme}:${keys.previousSecretEncrypted}`));
    }
    return open;
  }
}

/** Whether a debug line would be written (the root logger's level; without one, Nest's own logger decides). */
function debugLogged(): boolean {
  return PinoLogger.root?.isLevelEnabled('debug') ?? true;
}
