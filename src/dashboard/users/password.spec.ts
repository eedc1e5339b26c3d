import { hashPassword, verifyPassword } from './password';

describe('password hashing', () => {
  it('salts every hash and verifies only the right password', async () => {
    const a = await hashPassword('correct horse battery staple');
    const b = await hashPassword('correct horse battery staple');
    expect(a).toMatch(/^scrypt\$16384\$8\$1\$[A-Za-z0-9+/=]+\$[A-Za-z0-9+/=]+$/);
    expect(a).not.toBe(b);
    expect(a).not.toContain('correct horse');
    await expect(verifyPassword('correct horse battery staple', a)).resolves.toBe(true);
    await expect(verifyPassword('correct horse battery stapler', a)).resolves.toBe(false);
  });

  it('refuses hashes it does not know', async () => {
    await expect(verifyPassword('x', 'plain')).resolves.toBe(false);
    await expect(verifyPassword('x', 'bcrypt$1$2$3$abc$def')).resolves.toBe(false);
  });
});
