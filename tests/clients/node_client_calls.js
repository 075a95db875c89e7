// The autoinspector-node client library, unmodified, against a live service.
//
// Usage: AUTOINSPECTOR_API_BASE_URL=http://127.0.0.1:PORT node node_client_calls.js CLIENT_DIR API_KEY
// CLIENT_DIR is the built library (`make node-client`: build/clients/autoinspector-node).
// Prints one JSON object: what each call answered, for the Python test to check against the
// stored inspections. Any refused call is recorded with the error body the client received.
'use strict';

const path = require('path');
const Autoinspector = require(path.resolve(process.argv[2], 'dist', 'index.js'));

const client = new Autoinspector({ apikey: process.argv[3], maxRetries: 0 });
const common = {
  locale: 'es_AR',
  delivery: { channel: 'email', destination: 'driver@example.com' },
  consumer: {
    firstName: 'Luciano',
    lastName: 'Alvarez',
    email: 'lucianoalvarez1212@gmail.com',
    identification: '3213232',
    sex: 'male',
  },
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
  const products = client.inspections;
  await attempt(results, 'templates.list', () => client.templates.list({ inspectionType: 'car' }));
  await attempt(results, 'templates.preview', () =>
    client.templates.preview({ inspectionType: 'car' })
  );
  const car = { plate: 'AB705SU', color: 'black', milage: 15000, use: 'particular', year: '2020',
    make: 'JEEP', model: 'RENEGADE', chassis: '8AJFB8CD1K1234567' };
  await attempt(results, 'car.create', () => products.car.create({ ...common, car }));
  await attempt(results, 'moto.create', () => products.moto.create({ ...common, moto: car }));
  await attempt(results, 'bike.create', () =>
    products.bike.create({ ...common, bike: { make: 'Trek', model: 'Marlin 5', price: 1200, serialNumber: 'WTU1' } })
  );
  await attempt(results, 'cellphone.create', () =>
    products.cellphone.create({ ...common, cellphone: { make: 'Apple', model: '13', price: 900, serialNumber: 'F2L' } })
  );
  await attempt(results, 'machinery.create', () =>
    products.machinery.create({
      ...common,
      machinery: { make: 'JOHN DEERE', model: 'V2', year: '2019', color: 'black',
        purpose: 'Agrícola', use: 'PRIVADO', type: 'backhoe' },
    })
  );
  if (results['machinery.create'].ok) {
    const created = results['machinery.create'].value;
    // The library sends these fields flat, without the `machinery` wrapper.
    await attempt(results, 'machinery.update', () =>
      products.machinery.update(created.productId, { make: 'CAT', purpose: 'Vial' })
    );
    await attempt(results, 'inspections.presignDetail', () =>
      products.presignDetail(created.inspectionId, {
        expiresInSeconds: 600,
        identity: { type: 'internalId', id: 'member-1' },
      })
    );
    await attempt(results, 'inspections.finish', () =>
      products.finish({ inspectionId: created.inspectionId })
    );
    await attempt(results, 'inspections.createReportRequest', () =>
      products.createReportRequest(created.inspectionId)
    );
  }
  await attempt(results, 'people.create', () =>
    products.people.create({
      ...common,
      people: { configuration: { sex: { run: false, required: false }, dni: { run: true, required: false } } },
    })
  );
  const goods = [{ category: 'electronics', type: 'camera', make: 'GO PRO', model: 'PRO', price: '14400', serialNumber: 'A23r' }];
  await attempt(results, 'goods.create', () => products.goods.create({ ...common, goods }));
  if (results['goods.create'].ok) {
    const created = results['goods.create'].value;
    await attempt(results, 'goods.addGoods', () =>
      products.goods.addGoods(created.inspectionId, [
        { category: 'sports', type: 'kayak', make: 'Rainbow', model: 'Oasis', price: '900' },
      ])
    );
    await attempt(results, 'goods.update', () =>
      products.goods.update(created.productId, { price: '15000', serialNumber: 'A23r-2' })
    );
    await attempt(results, 'inspections.retrieve', () => products.retrieve(created.inspectionId));
  }
  if (results['car.create'].ok) {
    const created = results['car.create'].value;
    await attempt(results, 'car.update', () => products.car.update(created.productId, { make: 'FIAT' }));
    // Multipart with a `data` part (the library's Helper.buildFormData).
    await attempt(results, 'inspections.update', () =>
      products.update(created.inspectionId, {
        metadata: { claim: 'C-991' },
        consumer: { phone: '+5491122334455' },
        inputs: [],
      })
    );
  }
  await attempt(results, 'inspections.list', () =>
    products.list({ veredict: 'not_provided', plate: 'AB705SU', limit: 10 })
  );
  await attempt(results, 'inspections.retrieve.missing', () =>
    products.retrieve('0123456789abcdef01234567')
  );
  process.stdout.write(JSON.stringify(results) + '\n');
}

main().catch((error) => {
  process.stderr.write(String(error && error.stack ? error.stack : error) + '\n');
  process.exit(1);
});
