// Accounts: who is signed in, sign-in, sign-up and sign-out (the session cookie goes along).
import { api, call } from '../../api/client';
import type { components } from '../../api/schema';

export type User = components['schemas']['UserPublic'];

export async function logIn(username: string, password: string): Promise<User> {
  return call(() => api.POST('/api/auth/login', { body: { username, password } }));
}

export async function signUpUser(username: string, password: string): Promise<User> {
  return call(() => api.POST('/api/auth/signup', { body: { username, password } }));
}

export async function logOut(): Promise<void> {
  await call(() => api.POST('/api/auth/logout'));
}

export type SessionState = components['schemas']['SessionPublic'];

/** Who is signed in; answers 200 either way (a 401 here would be logged by the browser as an error). */
export async function fetchSession(): Promise<SessionState> {
  return call(() => api.GET('/api/auth/session'));
}
