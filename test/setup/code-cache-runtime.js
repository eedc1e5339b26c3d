const { compileFunction } = require('node:vm');
const Runtime = require('jest-runtime').default;

/**
 * Per jest worker: a module's file → the code first compiled for it, with the parameters it was wrapped in, and V8's
 * code cache of that (about 13 MB for the application's few thousand modules).
 */
const cache = new Map();

/**
 * jest's runtime, with V8's code cache kept across the spec files a worker runs.
 *
 * jest compiles every module anew in each spec file's context, and most spec files load the same few thousand
 * (the application and its dependencies): that compile was about a quarter of loading them. V8's cache of a compiled
 * function is bound to no context, so each module's code is parsed once per worker and taken from the cache after.
 * The cache holds the code itself (jest's transform of the file) and the wrapper's parameters (V8 does not check
 * them): a module compiled from other code or in another wrapper is compiled afresh.
 *
 * It wraps the compile step of jest's module executor (jest 30), as that does it but for the cache; with a jest
 * that has no such step, or for code the cache cannot take, jest's own compile runs.
 */
class CodeCacheRuntime extends Runtime {
  constructor(...args) {
    super(...args);
    const executor = this.executor;
    if (typeof executor?.compile !== 'function' || typeof executor.dynamicImport !== 'function') return;
    const compile = executor.compile.bind(executor);
    executor.compile = (code, filename) => {
      const context = executor.environment.getVmContext();
      const params = executor.injectedModuleParameters;
      const cached = cache.get(filename);
      // Node 20 drops importModuleDynamically when it takes code from the cache: code with import() is left to jest
      const plain = executor.resolution?.isCoreModule(filename) !== false || code.includes('import(');
      const differs = cached && (cached.code !== code || cached.params !== params.join());
      if (!context || plain || differs) return compile(code, filename);
      let fn;
      try {
        fn = compileFunction(code, params, {
          filename,
          parsingContext: context,
          importModuleDynamically: (specifier, _fn, attributes, ...rest) =>
            executor.dynamicImport(specifier, filename, context, attributes, rest[0]),
          ...(cached ? { cachedData: cached.data } : { produceCachedData: true }),
        });
      } catch {
        return compile(code, filename); // a syntax error, reported as jest reports it
      }
      if (!cached && fn.cachedData) cache.set(filename, { code, params: params.join(), data: fn.cachedData });
      return fn;
    };
  }
}

module.exports = CodeCacheRuntime;
