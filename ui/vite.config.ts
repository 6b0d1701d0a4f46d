// The operator console's build: plain TypeScript and Chart.js bundled into static files under dist/ui/,
// served by the api role under /ui/ (api/ui-static.ts). No CDN, no request leaves the machine.
import { defineConfig } from 'vite'
import { fileURLToPath } from 'node:url'

export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  base: '/ui/',
  logLevel: 'warn',
  build: {
    outDir: fileURLToPath(new URL('../dist/ui', import.meta.url)),
    emptyOutDir: true,
    target: 'es2022',
    chunkSizeWarningLimit: 400
  }
})
