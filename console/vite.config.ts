import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

const here = fileURLToPath(new URL('.', import.meta.url));

// The operator console: built into dist/console-ui, served by the service under /console.
export default defineConfig({
  root: here,
  base: '/console/',
  publicDir: 'public',
  // Preact's automatic JSX runtime through esbuild; no Babel needed.
  esbuild: { jsx: 'automatic', jsxImportSource: 'preact' },
  resolve: { alias: { react: 'preact/compat', 'react-dom': 'preact/compat' } },
  build: {
    outDir: fileURLToPath(new URL('../dist/console-ui', import.meta.url)),
    emptyOutDir: true,
    target: 'es2022',
    // The page's Content-Security-Policy forbids inline script; keep every asset a file.
    modulePreload: { polyfill: false },
    assetsInlineLimit: 0,
    sourcemap: false,
    reportCompressedSize: false,
  },
  // `npm run console:dev`: live reload, with the portal routes of a service started on :3000
  server: { proxy: { '/portal-api': 'http://127.0.0.1:3000' } },
  logLevel: 'warn',
});
