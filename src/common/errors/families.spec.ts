import { familyOf } from './families';

describe('familyOf', () => {
  it('reads the family from the path as the router matches it', () => {
    expect(familyOf('/portal-api/apps?x=/gateway/')).toBe('portal');
    expect(familyOf('/portal%2Dapi/apps')).toBe('portal');
    expect(familyOf('/%61pi/users')).toBe('dashboard');
    expect(familyOf('/gateway/apis/oas/%ZZ')).toBe('gateway');
    expect(familyOf('/admin')).toBe('admin');
    expect(familyOf('/apix')).toBe('other');
    expect(familyOf('/health')).toBe('other');
  });

  it('reads a request target in absolute form as the path the router finds in it', () => {
    expect(familyOf('http://127.0.0.1:3000/portal-api/apps')).toBe('portal');
    expect(familyOf('https://host/api/apis?q=x')).toBe('dashboard');
    expect(familyOf('http://host//admin/users')).toBe('admin');
    expect(familyOf('http://host/gateway/apis/oas/%ZZ')).toBe('gateway');
    expect(familyOf('http://host/health')).toBe('other');
  });
});
