import { Component, type ErrorInfo, type ReactNode } from 'react';
import i18n from '../i18n';

interface Props {
  children: ReactNode;
}

interface State {
  error: Error | null;
}

/** Shows what broke instead of a blank screen; "Try again" re-mounts the children. */
export class ErrorBoundary extends Component<Props, State> {
  override state: State = { error: null };

  static getDerivedStateFromError(error: Error): State {
    return { error };
  }

  override componentDidCatch(error: Error, info: ErrorInfo): void {
    // Kept for whoever opens the developer tools; the page itself shows the message.
    console.error('DragDL UI error', error, info.componentStack);
  }

  override render() {
    const { error } = this.state;
    if (!error) return this.props.children;
    return (
      <div className="error-screen" role="alert">
        <h2>{i18n.t('error.title')}</h2>
        <pre className="error-screen__message">{error.message || String(error)}</pre>
        <div className="error-screen__actions">
          <button type="button" className="btn btn--primary" onClick={() => this.setState({ error: null })}>
            {i18n.t('error.retry')}
          </button>
          <button type="button" className="btn" onClick={() => window.location.reload()}>
            {i18n.t('error.reload')}
          </button>
        </div>
      </div>
    );
  }
}
