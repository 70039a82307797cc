// The signed-in user's storage against their quotas and their limits per task; administrators also
// edit every account's limits here.
import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import { useNotify } from '../../ui/toast';
import { useSession } from '../auth/SessionProvider';
import { formatBytes, formatPercent } from '../tasks/format';
import { usePolling, type Polled } from '../tasks/usePolling';
import { PageState, ProgressBar } from '../tasks/widgets';
import { getAccount, listUsers, updateUser, type Account, type UserPublic } from './api';
import { draftOf, LIMIT_FIELDS, updateOf, type LimitDraft } from './limits';
import { errorText } from '../../i18n/errorText';
import './account.css';

function StorageMeter({ label, help, used, quota }: { label: string; help?: string; used: number; quota: number }) {
  const { t } = useTranslation();
  const share = quota > 0 ? used / quota : 1;
  return (
    <div className="meter" data-meter={label}>
      <div className="meter__head">
        <span className="meter__label">{label}</span>
        <span className="meter__figures">
          {t('account.used', { used: formatBytes(used), quota: formatBytes(quota) })}
        </span>
      </div>
      <ProgressBar value={share} label={t('account.usedLabel', { what: label, percent: formatPercent(share, 0) })} />
      {help && <p className="muted meter__help">{help}</p>}
      {used >= quota && (
        <p className="wb-error" role="alert">
          {t('account.full')}
        </p>
      )}
    </div>
  );
}

function MyAccount({ account }: { account: Polled<Account> }) {
  const { t, i18n } = useTranslation();
  if (account.error) return <PageState kind="error" message={t('account.failed', { message: account.error })} />;
  if (!account.data) return <PageState kind="loading" message={t('account.loading')} />;
  const { user, limits, usage } = account.data;
  const number = (value: number) => value.toLocaleString(i18n.language);
  return (
    <>
      <header className="wb-head">
        <h1 id="account-title">{t('account.title')}</h1>
        <span className="wb-head__count">
          {user.username} · {t(user.is_admin ? 'account.admin' : 'account.member')}
        </span>
      </header>
      <div className="account-cards">
        <section className="chart-card account-card" aria-labelledby="storage-title">
          <h2 id="storage-title">{t('account.storage')}</h2>
          <StorageMeter label={t('account.datasets')} used={usage.datasets_bytes} quota={limits.dataset_quota_bytes} />
          <StorageMeter
            label={t('account.artifacts')}
            help={t('account.artifactsHelp')}
            used={usage.artifacts_bytes}
            quota={limits.artifact_quota_bytes}
          />
        </section>
        <section className="chart-card account-card" aria-labelledby="limits-title">
          <h2 id="limits-title">{t('account.limits')}</h2>
          <dl className="account-limits">
            <dt>{t('account.runningTasks')}</dt>
            <dd>{number(limits.max_running_tasks)}</dd>
            <dt>{t('account.cpus')}</dt>
            <dd>{number(limits.max_cpus_per_task)}</dd>
            <dt>{t('account.gpus')}</dt>
            <dd>{number(limits.max_gpus_per_task)}</dd>
            <dt>{t('account.workers')}</dt>
            <dd>{number(limits.max_workers_per_task)}</dd>
          </dl>
          <p className="muted">{t('account.limitsHelp')}</p>
        </section>
      </div>
    </>
  );
}

function UserRow({ user, onSaved }: { user: UserPublic; onSaved: () => void }) {
  const { t } = useTranslation();
  const notify = useNotify();
  const [draft, setDraft] = useState<LimitDraft>(() => draftOf(user));
  const [admin, setAdmin] = useState(user.is_admin);
  const [saving, setSaving] = useState(false);

  const save = () => {
    const checked = updateOf(draft);
    if ('invalid' in checked) {
      const field = t(`account.col.${checked.invalid}`);
      notify({ kind: 'error', message: t('account.invalid', { field, name: user.username }) });
      return;
    }
    setSaving(true);
    updateUser(user.id, { ...checked.update, is_admin: admin })
      .then((saved) => {
        setDraft(draftOf(saved));
        setAdmin(saved.is_admin);
        notify({ kind: 'success', message: t('account.saved', { name: saved.username }) });
        onSaved();
      })
      .catch((reason: unknown) => {
        notify({
          kind: 'error',
          message: t('account.saveFailed', { name: user.username, message: errorText(reason, t) }),
        });
      })
      .finally(() => setSaving(false));
  };

  return (
    <tr data-user={user.username}>
      <th scope="row" className="col-name">
        {user.username}
      </th>
      <td>
        <input
          type="checkbox"
          checked={admin}
          onChange={(event) => setAdmin(event.target.checked)}
          aria-label={`${t('account.col.admin')}: ${user.username}`}
        />
      </td>
      {LIMIT_FIELDS.map((field) => (
        <td key={field} className="num">
          <input
            type="text"
            inputMode="decimal"
            className="limit-input"
            name={field}
            value={draft[field]}
            placeholder={t('account.defaultValue')}
            aria-label={`${t(`account.col.${field}`)}: ${user.username}`}
            onChange={(event) => setDraft({ ...draft, [field]: event.target.value })}
          />
        </td>
      ))}
      <td className="col-actions">
        <button type="button" className="btn btn--small btn--primary" disabled={saving} onClick={save}>
          {t('account.save')}
        </button>
      </td>
    </tr>
  );
}

/** Every account's limits; `onSaved` after a change (the administrator may have changed their own). */
function UsersTable({ onSaved }: { onSaved: () => void }) {
  const { t } = useTranslation();
  const users = usePolling(listUsers, null, 'users');
  const saved = () => {
    users.refresh();
    onSaved();
  };
  return (
    <section className="chart-card" aria-labelledby="users-title">
      <h2 id="users-title">{t('account.users')}</h2>
      <p className="muted">{t('account.usersHelp')}</p>
      {users.error && (
        <p className="wb-error" role="alert">
          {t('account.usersFailed', { message: users.error })}
        </p>
      )}
      {users.data && (
        <div className="account-users">
          <table className="wb-table users-table">
            <thead>
              <tr>
                <th scope="col">{t('account.col.user')}</th>
                <th scope="col">{t('account.col.admin')}</th>
                {LIMIT_FIELDS.map((field) => (
                  <th key={field} scope="col" className="num">
                    {t(`account.col.${field}`)}
                  </th>
                ))}
                <th scope="col" className="col-actions">
                  {t('account.col.actions')}
                </th>
              </tr>
            </thead>
            <tbody>
              {users.data.map((user) => (
                <UserRow key={user.id} user={user} onSaved={saved} />
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}

export default function AccountPage() {
  const session = useSession();
  const account = usePolling(getAccount, null, 'account');
  return (
    <section className="wb-page" aria-labelledby="account-title">
      <MyAccount account={account} />
      {session.user?.is_admin && <UsersTable onSaved={account.refresh} />}
    </section>
  );
}
