/**
 * The request validation of the single v1 endpoints, for queries that arrive inside a batch or a
 * job: each query goes through the same OpenAPI validator, as the body of a POST to its endpoint,
 * so it is accepted or refused, in the same words, as the endpoint would.
 */
import * as OpenApiValidator from 'express-openapi-validator';
import type { RequestHandler } from 'express';
import { openApiDocument } from '../document';

export const queryOperations = ['compounds', 'connectivity', 'similarity', 'substructure'] as const;
export type QueryOperation = (typeof queryOperations)[number];

/** The request a query would be, as the validator and the error handler read it. */
export interface QueryRequest {
  method: 'POST';
  url: string;
  originalUrl: string;
  path: string;
  baseUrl: string;
  headers: Record<string, string>;
  body: unknown;
  query: Record<string, never>;
  params: Record<string, string>;
  /** What the validator's middlewares ask of the app: its routing settings, and path parameters (none here). */
  app: { enabled: (setting: string) => boolean; param: () => void };
}

export class QueryValidator {
  private readonly middlewares: RequestHandler[];

  constructor() {
    this.middlewares = OpenApiValidator.middleware({
      // The validator keeps and trims the document it is given: a copy of its own.
      apiSpec: structuredClone(openApiDocument()) as never,
      validateRequests: { allowUnknownQueryParameters: false, coerceTypes: false },
      validateResponses: false,
      ignoreUndocumented: false,
      useRequestUrl: true,
    }) as unknown as RequestHandler[];
  }

  /** The request `body` is as a POST to `/api/v1/{operation}`. */
  static requestOf(operation: QueryOperation, body: unknown): QueryRequest {
    const path = `/api/v1/${operation}`;
    return {
      method: 'POST',
      url: path,
      originalUrl: path,
      path,
      baseUrl: '',
      headers: { 'content-type': 'application/json' },
      body,
      query: {},
      params: {},
      app: { enabled: () => false, param: () => undefined },
    };
  }

  /** Resolves when the endpoint's validator accepts the request; rejects with the validator's error otherwise. */
  async check(request: QueryRequest): Promise<void> {
    for (const middleware of this.middlewares) {
      await new Promise<void>((resolve, reject) => {
        try {
          void middleware(request as never, {} as never, (error?: unknown) => (error ? reject(error) : resolve()));
        } catch (error) {
          reject(error);
        }
      });
    }
  }
}
