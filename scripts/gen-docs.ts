/** Rewrites the generated docs (`npm run gen:docs`). */
import { writeFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { renderConfigDoc } from './config-doc.js'

const root = fileURLToPath(new URL('../../', import.meta.url))
writeFileSync(`${root}docs/config.md`, renderConfigDoc())
process.stdout.write('docs/config.md written\n')
