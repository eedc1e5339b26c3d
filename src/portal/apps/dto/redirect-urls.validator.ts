import { registerDecorator, ValidationOptions } from 'class-validator';

/** Splits a RedirectURLs value ("one address, or several separated by commas") into its addresses. */
export function splitRedirectUrls(value: string): string[] {
  return value
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
}

/** Every address is absolute (a scheme, e.g. https: or an app's own scheme) and has no #fragment (RFC 6749 §3.1.2). */
export function isRedirectUrlList(value: unknown): boolean {
  if (typeof value !== 'string') return false;
  return splitRedirectUrls(value).every((u) => {
    try {
      const url = new URL(u);
      return /^[a-z][a-z0-9+.-]*:$/i.test(url.protocol) && url.hash === '' && !u.includes('#');
    } catch {
      return false;
    }
  });
}

export function IsRedirectUrlList(options?: ValidationOptions): PropertyDecorator {
  return (target, propertyName) =>
    registerDecorator({
      name: 'isRedirectUrlList',
      target: target.constructor,
      propertyName: propertyName as string,
      options: {
        message: '$property must be an absolute URL without fragment, or several separated by commas',
        ...options,
      },
      validator: { validate: isRedirectUrlList },
    });
}
