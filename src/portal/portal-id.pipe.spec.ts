import { ApiError } from '../common/errors';
import { PortalIdPipe } from './portal-id.pipe';

describe('PortalIdPipe', () => {
  const pipe = new PortalIdPipe(() => new ApiError(404, 'Thing not found'));

  it('parses positive 32-bit integers', () => {
    expect(pipe.transform('1')).toBe(1);
    expect(pipe.transform('2147483647')).toBe(2147483647);
  });

  it.each(['0', '-1', '01', '1.5', '1e3', 'abc', '', '2147483648', '99999999999'])('answers 404 for %j', (v) => {
    expect(() => pipe.transform(v)).toThrow(expect.objectContaining({ status: 404, messages: ['Thing not found'] }));
  });
});
