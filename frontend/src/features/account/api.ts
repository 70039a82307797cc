// The signed-in user's account (limits and storage in use) and, for administrators, every account.
import { api, call } from '../../api/client';
import type { components } from '../../api/schema';

export type Account = components['schemas']['Account'];
export type UserPublic = components['schemas']['UserPublic'];
export type UserUpdate = components['schemas']['UserUpdate'];

export function getAccount(): Promise<Account> {
  return call(() => api.GET('/api/users/me'));
}

export async function listUsers(): Promise<UserPublic[]> {
  return (await call(() => api.GET('/api/users', { params: { query: { limit: 500 } } }))).data;
}

export function updateUser(userId: number, body: UserUpdate): Promise<UserPublic> {
  return call(() => api.PATCH('/api/users/{user_id}', { params: { path: { user_id: userId } }, body }));
}
