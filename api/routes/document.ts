/** The API's own description: docs/openapi.yaml, as the running server generates it from its route table. */
import type { RouteDef } from '../route-table.js'

export const documentRoutes: RouteDef[] = [
  {
    method: 'GET',
    path: '/openapi.yaml',
    tag: 'document',
    summary: "this OpenAPI document (docs/openapi.yaml), generated from the server's own route table and schemas",
    ok: [{ status: 200, description: 'OpenAPI 3.1 in YAML (application/yaml)' }],
    errors: [],
    handle(ctx, _req, res) {
      res.header('Content-Type', 'application/yaml').send(ctx.openApiText())
    }
  }
]
