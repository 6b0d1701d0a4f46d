/**
 * The console's types of the management API's answers (ui/src/api-types.ts), generated from docs/openapi.yaml by
 * openapi-typescript, so the console and the server cannot drift: `npm run gen:docs` writes the file, and
 * scripts/generated-docs.test.ts fails when it is not what the document generates.
 */
import openapiTS, { astToString } from 'openapi-typescript'
import { renderOpenApi } from '../api/openapi.js'

export const UI_TYPES_FILE = 'ui/src/api-types.ts'

export async function renderUiTypes(): Promise<string> {
  const ast = await openapiTS(renderOpenApi(), { alphabetize: false })
  return (
    '// Generated from docs/openapi.yaml by openapi-typescript (npm run gen:docs, scripts/ui-types.ts): do not edit.\n' +
    '// ui/src/api.ts names the schemas the console uses.\n' +
    astToString(ast)
  )
}
