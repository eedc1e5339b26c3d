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
});
