// The autoinspector-node client library's OAuth 2.0 calls, unmodified, against a live service.
//
// Usage: AUTOINSPECTOR_API_BASE_URL=http://127.0.0.1:PORT \
//   node node_oauth_calls.js CLIENT_DIR API_KEY CLIENT_APP_ID CLIENT_SECRET CODE
// API_KEY is the partner application's company's key (the library always sends one), CODE an
// authorization code a member gave the application on the consent page. Prints one JSON object:
// what each call answered (or the error body the library received).
'use strict';

const path = require('path');
const Autoinspector = require(path.resolve(process.argv[2], 'dist', 'index.js'));

const [apikey, clientAppId, clientSecret, code] = process.argv.slice(3, 7);
const client = new Autoinspector({
  apikey,
  maxRetries: 0,
  oauthCredentials: { client_app_id: clientAppId, client_secret: clientSecret },
});
const common = {
  locale: 'es_AR',
  delivery: { channel: 'email', destination: 'driver@example.com' },
  consumer: { firstName: 'Ana', lastName: 'Paz', identification: '30111222' },
  templateId: 'easy',
};

async function attempt(results, name, call) {
  try {
    results[name] = { ok: true, value: await call() };
  } catch (error) {
    results[name] = { ok: false, error: error === undefined ? null : error };
  }
}

async function main() {
  const results = {};
  await attempt(results, 'oauth.exchangeCodeForAccessToken', () =>
    client.oauth.exchangeCodeForAccessToken({ code })
  );
  if (!results['oauth.exchangeCodeForAccessToken'].ok) {
    process.stdout.write(JSON.stringify(results) + '\n');
    return;
  }
  const granted = results['oauth.exchangeCodeForAccessToken'].value;
  const access_token = granted.access_token;
  await attempt(results, 'oauth.user.memberships.list', () =>
    client.oauth.user.memberships.list({ access_token })
  );
  const membershipId = results['oauth.user.memberships.list'].ok
    ? results['oauth.user.memberships.list'].value[0]._id
    : 'none';
  // The products' create methods take the member's token in the body.
  await attempt(results, 'car.create', () =>
    client.inspections.car.create({ ...common, car: { plate: 'AB123CD', year: 2020 }, access_token })
  );
  await attempt(results, 'people.create', () =>
    client.inspections.people.create({ ...common, people: {}, access_token })
  );
  await attempt(results, 'goods.create', () =>
    client.inspections.goods.create({
      ...common,
      goods: [{ category: 'electronics', type: 'camera', make: 'GO PRO', model: 'PRO', price: '900' }],
      access_token,
    })
  );
  if (results['car.create'].ok) {
    await attempt(results, 'inspections.retrieve', () =>
      client.inspections.retrieve(results['car.create'].value.inspectionId, access_token)
    );
  }
  await attempt(results, 'oauth.user.inspections.list.me', () =>
    client.oauth.user.inspections.list({
      scope: 'me',
      membershipId,
      access_token,
      params: { page: 1, from: new Date('2020-01-01T00:00:00Z'), status: 'created' },
    })
  );
  await attempt(results, 'oauth.user.inspections.list.all', () =>
    client.oauth.user.inspections.list({ scope: 'all', membershipId, access_token, params: { page: 1 } })
  );
  await attempt(results, 'templates.listWithOAuth', () => client.templates.listWithOAuth(access_token));
  await attempt(results, 'oauth.refreshAccessToken', () =>
    client.oauth.refreshAccessToken({ refresh_token: granted.refresh_token })
  );
  if (results['oauth.refreshAccessToken'].ok) {
    const renewed = results['oauth.refreshAccessToken'].value.access_token;
    await attempt(results, 'oauth.user.memberships.list.renewed', () =>
      client.oauth.user.memberships.list({ access_token: renewed })
    );
  }
  // The refresh token the first refresh used up: a reuse, which revokes the authorization.
  await attempt(results, 'oauth.refreshAccessToken.reused', () =>
    client.oauth.refreshAccessToken({ refresh_token: granted.refresh_token })
  );
  process.stdout.write(JSON.stringify(results) + '\n');
}

main().catch((error) => {
  process.stderr.write(String(error && error.stack ? error.stack : error) + '\n');
  process.exit(1);
});
