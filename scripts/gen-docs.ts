/** Rewrites the generated docs and types (`npm run gen:docs`): docs/config.md, docs/openapi.yaml, ui/src/api-types.ts. */
import { writeFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { renderOpenApi } from '../api/openapi.js'
import { renderConfigDoc } from './config-doc.js'
import { renderUiTypes, UI_TYPES_FILE } from './ui-types.js'

const root = fileURLToPath(new URL('../../', import.meta.url))
writeFileSync(`${root}docs/config.md`, renderConfigDoc())
process.stdout.write('docs/config.md written\n')
writeFileSync(`${root}docs/openapi.yaml`, renderOpenApi())
process.stdout.write('docs/openapi.yaml written\n')
writeFileSync(`${root}${UI_TYPES_FILE}`, await renderUiTypes())
process.stdout.write(`${UI_TYPES_FILE} written\n`)
