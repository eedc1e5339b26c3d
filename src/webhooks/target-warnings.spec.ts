import { AddressGuard } from './send/address-guard';
import { targetWarnings } from './target-warnings';

describe('targetWarnings', () => {
  const closed = new AddressGuard([]);
  const loopbackOpen = new AddressGuard(['127.0.0.0/8', '::1/128']);

  it('warns about literal loopback, private and IPv6 addresses the guard refuses', () => {
    for (const url of [
      'http://127.0.0.1:8080/hooks',
      'http://10.1.2.3/x',
      'http://[::1]:9000/',
      'http://[::ffff:192.168.1.1]/',
      'http://0.0.0.0/',
    ]) {
      const [warning, ...rest] = targetWarnings(url, closed);
      expect(rest).toEqual([]);
      expect(warning).toMatch(/WEBHOOK_ALLOWED_CIDRS does not allow/);
      expect(warning).toMatch(/blocked_address/);
    }
  });

  it('warns about localhost names, which always mean this machine', () => {
    expect(targetWarnings('http://localhost:8080/hooks', closed)[0]).toContain('127.0.0.1 / ::1');
    expect(targetWarnings('http://api.localhost/hooks', closed)).toHaveLength(1);
  });

  it('says nothing once the allow-list opens the address', () => {
    expect(targetWarnings('http://127.0.0.1:8080/hooks', loopbackOpen)).toEqual([]);
    expect(targetWarnings('http://localhost:8080/hooks', loopbackOpen)).toEqual([]);
    expect(targetWarnings('http://[::1]:8080/hooks', loopbackOpen)).toEqual([]);
  });

  it('says nothing about public addresses or hostnames it cannot judge without DNS', () => {
    expect(targetWarnings('https://93.184.215.14/hooks', closed)).toEqual([]);
    expect(targetWarnings('https://crm.example.com/hooks', closed)).toEqual([]);
    expect(targetWarnings('https://localhost.example.com/hooks', closed)).toEqual([]);
  });
});
