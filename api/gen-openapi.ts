/** Rewrites docs/openapi.yaml from the route table and schemas: `node dist/api/gen-openapi.js`. */
import { writeFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { renderOpenApi } from './openapi.js'

const file = fileURLToPath(new URL('../../docs/openapi.yaml', import.meta.url))
writeFileSync(file, renderOpenApi())
process.stdout.write(`${file} written\n`)
