/**
 * How many times a request carries header `name` (lower case), from its raw headers: the parsed ones cannot tell,
 * as Node keeps only the first of some (Authorization, Content-Type) and joins the copies of others.
 */
export function countHeader(rawHeaders: string[], name: string): number {
  let copies = 0;
  for (let i = 0; i < rawHeaders.length; i += 2)
    if (rawHeaders[i].length === name.length && rawHeaders[i].toLowerCase() === name) copies++;
  return copies;
}
