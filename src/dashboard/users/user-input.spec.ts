import { beyondCaller, parseUserInput, permissionErrors } from './user-input';

const valid = {
  email_address: 'jane@example.com',
  first_name: 'Jane',
  last_name: 'Doe',
  user_permissions: { apis: 'read' },
};

describe('parseUserInput', () => {
  it('accepts a valid user and drops unknown and read-only members', () => {
    const { input, errors } = parseUserInput(
      { ...valid, id: 'x', access_key: 'y', is_god: true, active: true, password: 'secret' },
      { permissionsRequired: true },
    );
    expect(errors).toEqual([]);
    expect(input).toMatchObject({ ...valid, active: true, password: 'secret' });
    expect(input).not.toHaveProperty('id');
    expect(input).not.toHaveProperty('access_key');
    expect(input).not.toHaveProperty('is_god');
  });

  it('reports every missing required field once', () => {
    expect(parseUserInput({}, { permissionsRequired: true }).errors).toEqual([
      'email_address is required',
      'first_name is required',
      'last_name is required',
      'user_permissions is required',
    ]);
    expect(parseUserInput({}, { permissionsRequired: false }).errors).toHaveLength(3);
  });

  it('rejects wrong types and values', () => {
    const { errors } = parseUserInput(
      {
        email_address: 'not-an-email',
        first_name: '',
        last_name: 5,
        user_permissions: [],
        active: 'yes',
        password_max_days: -1,
        api_model: 'x',
      },
      { permissionsRequired: true },
    );
    expect(errors).toEqual([
      'email_address must be an email address',
      'first_name must not be empty',
      'last_name must be a string',
      'user_permissions must be an object',
      'active must be a boolean value',
      'api_model must be an object',
      'password_max_days must not be less than 0',
    ]);
  });

  it('takes names that show something on one line, as the portal does', () => {
    const names = (first_name: string, last_name: string) =>
      parseUserInput({ email_address: 'a@example.com', first_name, last_name }, { permissionsRequired: false }).errors;
    expect(names('   ', '\u200b\n')).toEqual([
      'first_name must not be blank (only whitespace or invisible characters)',
      'last_name must not contain control characters (line breaks, tabs, U+0000-U+001F, U+007F-U+009F, U+2028, U+2029)',
    ]);
    expect(names('a\u0007', 'b\u202e')).toEqual([
      'first_name must not contain control characters (line breaks, tabs, U+0000-U+001F, U+007F-U+009F, U+2028, U+2029)',
    ]);
    expect(names('Zoë', 'van der Berg')).toEqual([]);
  });

  it('refuses an object holding a member named constructor as a wrong type, rather than throwing', () => {
    for (const field of ['email_address', 'first_name', 'password', 'active', 'password_max_days'] as const) {
      const { errors } = parseUserInput(
        { ...valid, [field]: { constructor: 1, nested: { constructor: 'x' } } },
        { permissionsRequired: true },
      );
      expect(errors).toHaveLength(1);
      expect(errors[0]).toMatch(new RegExp(`^${field} must be`));
    }
  });

  it('still validates a body that holds a member named constructor or toString', () => {
    for (const odd of ['constructor', 'toString', 'valueOf']) {
      expect(parseUserInput({ ...valid, [odd]: { a: 1 } }, { permissionsRequired: true }).errors).toEqual([]);
      expect(
        parseUserInput({ ...valid, first_name: 5, [odd]: { a: 1 } }, { permissionsRequired: true }).errors,
      ).toEqual(['first_name must be a string']);
    }
  });

  it('rejects a body that is not an object', () => {
    for (const body of [null, [], 'x', 3])
      expect(parseUserInput(body, { permissionsRequired: false }).errors).toEqual(['the body must be a JSON object']);
  });
});

describe('permissions', () => {
  it('accepts the areas of 2.6 with read, write or deny, and the admin flags with admin', () => {
    expect(
      permissionErrors({ analytics: 'read', apis: 'write', users: 'deny', IsAdmin: 'admin', ResetPassword: 'admin' }),
    ).toEqual([]);
    expect(permissionErrors({})).toEqual([]);
  });

  it('names unknown areas and levels', () => {
    expect(permissionErrors({ apis: 'admin', everything: 'write', IsAdmin: 'yes', users: 1 })).toEqual([
      'user_permissions.apis must be one of read, write, deny',
      expect.stringMatching(/^user_permissions.everything is not a permission area/),
      'user_permissions.IsAdmin must be one of admin, deny',
      'user_permissions.users must be one of read, write, deny',
    ]);
  });

  it('lets a caller grant only what it holds; IsAdmin grants anything', () => {
    const caller = { users: 'write', apis: 'read' };
    expect(beyondCaller(caller, { users: 'read', apis: 'read', analytics: 'deny' })).toEqual([]);
    expect(beyondCaller(caller, { apis: 'write', analytics: 'read', IsAdmin: 'admin', ResetPassword: 'deny' })).toEqual(
      ['apis:write', 'analytics:read', 'IsAdmin'],
    );
    expect(beyondCaller({ IsAdmin: 'admin' }, { IsAdmin: 'admin', apis: 'write' })).toEqual([]);
  });
});
