// The API client, typed by the schema generated from the server's OpenAPI document
// (`npm run gen:api` writes schema.d.ts). The browser's session cookie goes along (same origin).
import createClient from 'openapi-fetch';
import type { paths } from './schema';

// X-Requested-With on every request: the server's CSRF rule for cookie-authenticated changes
// (src/dragdl/server/auth.py); a cross-site page cannot send it without a preflight.
export const api = createClient<paths>({ baseUrl: '', headers: { 'X-Requested-With': 'dragdl-web' } });

export class ApiError extends Error {
  readonly status: number;
  readonly body: unknown;
  /** Seconds from a 429's `Retry-After` header (the UI says when to try again); null without one. */
  readonly retryAfterS: number | null;

  constructor(status: number, message: string, body: unknown, retryAfter: string | null = null) {
    super(message);
    this.name = 'ApiError';
    this.status = status;
    this.body = body;
    const seconds = retryAfter === null ? Number.NaN : Number(retryAfter);
    this.retryAfterS = Number.isFinite(seconds) && seconds >= 0 ? Math.ceil(seconds) : null;
  }
}

/** The person-readable message in a FastAPI error body (`detail` as text or as a list). */
export function errorMessage(body: unknown, status: number): string {
  if (body && typeof body === 'object' && 'detail' in body) {
    const detail = (body as { detail: unknown }).detail;
    if (typeof detail === 'string') return detail;
    // A graph the server refused: {message, errors: [GraphError]}.
    if (detail && typeof detail === 'object' && 'message' in detail) {
      const { message, errors } = detail as { message: unknown; errors?: unknown };
      const list = Array.isArray(errors)
        ? errors
            .slice(0, 3)
            .map((e) => String((e as { message?: unknown })?.message ?? ''))
            .filter(Boolean)
        : [];
      return [String(message), ...list].join(' — ');
    }
    if (Array.isArray(detail)) {
      const parts = detail.map((item) => {
        if (item && typeof item === 'object') {
          const { msg, message, loc } = item as { msg?: unknown; message?: unknown; loc?: unknown };
          const where = Array.isArray(loc) ? `${loc.join('.')}: ` : '';
          return `${where}${String(msg ?? message ?? JSON.stringify(item))}`;
        }
        return String(item);
      });
      if (parts.length) return parts.join('; ');
    }
  }
  if (typeof body === 'string' && body.trim()) return body.trim().slice(0, 300);
  return `HTTP ${status}`;
}

/** Unwrap an openapi-fetch answer: the data, or an ApiError carrying the server's message. */
export function unwrap<T>(result: { data?: T; error?: unknown; response: Response }): T {
  if (result.error !== undefined || !result.response.ok) {
    const status = result.response.status;
    const retryAfter = result.response.headers.get('Retry-After');
    throw new ApiError(status, errorMessage(result.error, status), result.error, retryAfter);
  }
  return result.data as T;
}

/** Network failures from openapi-fetch become ApiErrors too. */
export async function call<T>(request: () => Promise<{ data?: T; error?: unknown; response: Response }>): Promise<T> {
  try {
    return unwrap(await request());
  } catch (error) {
    if (error instanceof ApiError) throw error;
    throw new ApiError(0, `The server cannot be reached (${(error as Error).message})`, null);
  }
}
