import { Logger } from '@nestjs/common';
import { describeError } from './family-exception.filter';

describe('describeError', () => {
  it('does not log a client that closed the connection before its body arrived as an unexpected error', () => {
    const logged = jest.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);
    try {
      // what Node raises on the body stream of a request whose client went away (statusCode as Fastify adds it)
      const aborted = Object.assign(new Error('aborted'), { code: 'ECONNRESET', statusCode: 400 });
      expect(describeError(aborted, 'portal')).toEqual({
        status: 400,
        messages: ['the client closed the connection before its body arrived'],
      });
      expect(logged).not.toHaveBeenCalled();
      // anything else unexpected is still a logged 500
      expect(describeError(new Error('boom'), 'portal')).toEqual({ status: 500, messages: ['Internal server error'] });
      expect(logged).toHaveBeenCalledTimes(1);
    } finally {
      logged.mockRestore();
    }
  });
});
