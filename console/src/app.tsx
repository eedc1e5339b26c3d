import { useEffect, useState } from 'preact/hooks';
import { ApiError, setUnauthorizedHandler, storedToken, storeToken } from './api';
import { AccessRequestPage, AccessRequestsPage } from './pages/access-requests';
import { AppsPage } from './pages/apps';
import { DeliveryPage } from './pages/delivery';
import { SignIn } from './pages/sign-in';
import { WebhookPage } from './pages/webhook';
import { WebhookFormPage } from './pages/webhook-form';
import { WebhooksPage } from './pages/webhooks';
import { match, navigate, useRoute } from './router';

export function App() {
  const [token, setToken] = useState<string | null>(storedToken());
  const [signedOutBy, setSignedOutBy] = useState<ApiError | undefined>(undefined);
  const route = useRoute();

  useEffect(() => {
    // A token the service stops accepting sends the operator back to sign in, with the API's words.
    setUnauthorizedHandler((error) => {
      storeToken(null);
      setToken(null);
      setSignedOutBy(error);
    });
  }, []);

  if (!token) {
    return (
      <SignIn
        notice={signedOutBy}
        onSignedIn={(t) => {
          storeToken(t);
          setSignedOutBy(undefined);
          setToken(t);
        }}
      />
    );
  }

  const section = route.split('/')[1] ?? 'webhooks';
  return (
    <>
      <header class="container-fluid topbar">
        <nav>
          <ul>
            <li>
              <strong class="brand">Gateway console</strong>
            </li>
          </ul>
          <ul class="sections">
            <li>
              <a href="#/webhooks" aria-current={section === 'webhooks' ? 'page' : undefined}>
                Webhooks
              </a>
            </li>
            <li>
              <a href="#/apps" aria-current={section === 'apps' ? 'page' : undefined}>
                Apps
              </a>
            </li>
            <li>
              <a href="#/access-requests" aria-current={section === 'access-requests' ? 'page' : undefined}>
                Access requests
              </a>
            </li>
            <li>
              <button
                type="button"
                class="secondary outline small"
                onClick={() => {
                  storeToken(null);
                  setToken(null);
                  navigate('/webhooks');
                }}
              >
                Sign out
              </button>
            </li>
          </ul>
        </nav>
      </header>
      <main class="container">
        <Screen route={route} />
      </main>
    </>
  );
}

function Screen({ route }: { route: string }) {
  let m: Record<string, string> | null;
  if (match('/webhooks', route)) return <WebhooksPage />;
  if (match('/webhooks/new', route)) return <WebhookFormPage />;
  if ((m = match('/webhooks/:id/edit', route))) return <WebhookFormPage id={m.id} />;
  if ((m = match('/webhooks/:id/deliveries/:deliveryId', route)))
    return <DeliveryPage webhookId={m.id} deliveryId={m.deliveryId} />;
  if ((m = match('/webhooks/:id', route))) return <WebhookPage id={m.id} />;
  if (match('/apps', route)) return <AppsPage />;
  if (match('/access-requests', route)) return <AccessRequestsPage />;
  if ((m = match('/access-requests/:id', route))) return <AccessRequestPage id={m.id} />;
  return (
    <article>
      <h2>Not found</h2>
      <p>
        There is no screen at <code>{route}</code>. <a href="#/webhooks">Go to the webhooks</a>.
      </p>
    </article>
  );
}
