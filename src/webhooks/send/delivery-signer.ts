import { Injectable, Logger } from '@nestjs/common';
import { SecretBox } from '../../common/crypto/secret-box';
import { SignatureScheme, signatureHeaders, SigningKey } from './signing';

/** A webhook's keys as stored (sealed): the current one, and the previous one while a rotation's grace period lasts. */
export interface SealedKeySet {
  secretEncrypted: string;
  signatureScheme: SignatureScheme;
  previousSecretEncrypted: string | null;
  previousSignatureScheme: SignatureScheme | null;
}

/**
 * Signs an attempt with the keys its webhook holds when the attempt is sent: the current key, and during
 * a grace period the previous one too, so receivers still holding the old key keep verifying.
 */
@Injectable()
export class DeliverySigner {
  private readonly logger = new Logger(DeliverySigner.name);

  constructor(private readonly secrets: SecretBox) {}

  headers(keys: SealedKeySet, msgId: string, body: string, now = Date.now()): Record<string, string> {
    const open = this.open(keys);
    // which schemes signed, never the keys or the signatures
    this.logger.debug({ deliveryId: msgId, schemes: open.map((k) => k.scheme) }, 'delivery signed');
    return signatureHeaders(open, msgId, body, now);
  }

  private open(keys: SealedKeySet): SigningKey[] {
    const open: SigningKey[] = [{ scheme: keys.signatureScheme, secret: this.secrets.decrypt(keys.secretEncrypted) }];
    if (keys.previousSecretEncrypted && keys.previousSignatureScheme) {
      open.push({ scheme: keys.previousSignatureScheme, secret: this.secrets.decrypt(keys.previousSecretEncrypted) });
    }
    return open;
  }
}
