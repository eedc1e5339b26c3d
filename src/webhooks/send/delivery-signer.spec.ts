import { Webhook } from 'standardwebhooks';
import { SecretBox } from '../../common/crypto/secret-box';
import { AppConfig } from '../../config';
import { DeliverySigner } from './delivery-signer';
import { newSigningKey } from './signing';

describe('DeliverySigner', () => {
  const box = new SecretBox({ secrets: { encryptionKey: Buffer.alloc(32, 7) } } as AppConfig);
  const signer = new DeliverySigner(box);
  const body = '{"Event":"AccessRequestApproved"}';

  it('signs with the current key alone outside a grace period', () => {
    const key = newSigningKey('v1');
    const h = signer.headers(
      {
        secretEncrypted: box.encrypt(key.secret),
        signatureScheme: 'v1',
        previousSecretEncrypted: null,
        previousSignatureScheme: null,
      },
      'd-1',
      body,
    );
    expect(h['webhook-signature'].split(' ')).toHaveLength(1);
    expect(new Webhook(key.secret).verify(body, h)).toEqual(JSON.parse(body));
  });

  it('signs with the current key, then the previous one, during a grace period', () => {
    const current = newSigningKey('v1a');
    const previous = newSigningKey('v1');
    const h = signer.headers(
      {
        secretEncrypted: box.encrypt(current.secret),
        signatureScheme: 'v1a',
        previousSecretEncrypted: box.encrypt(previous.secret),
        previousSignatureScheme: 'v1',
      },
      'd-2',
      body,
    );
    expect(h['webhook-signature']).toMatch(/^v1a,\S+ v1,\S+$/);
    expect(new Webhook(previous.secret).verify(body, h)).toEqual(JSON.parse(body));
  });
});
