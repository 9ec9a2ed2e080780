// The 2.2.1 PATCH examples (shared/ocpi-2.2.1/examples) as 2.1.1 PATCHes: valid against the 2.1.1 schemas.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Patch } from '../src/index.ts';
import { adapterFor } from '../src/index.ts';
import { assertValid, example221 } from './examples.ts';

const v211 = adapterFor('2.1.1');
const patch = (file: string): Patch<never> => example221(file) as Patch<never>;

describe('2.2.1 PATCH examples -> 2.1.1', () => {
  const cases: Array<[string, string, (p: Patch<never>) => object]> = [
    ['location_patch_example_location.json', 'ocpi-2.1.1/location.json', (p) => v211.locationPatchOut(p)],
    ['location_patch_example_status.json', 'ocpi-2.1.1/evse.json', (p) => v211.evsePatchOut(p)],
    ['location_patch_example_remove_evse.json', 'ocpi-2.1.1/evse.json', (p) => v211.evsePatchOut(p)],
    ['location_patch_example_tariff.json', 'ocpi-2.1.1/connector.json', (p) => v211.connectorPatchOut(p)],
    ['session_patch_example_charging_period.json', 'ocpi-2.1.1/session.json', (p) => v211.sessionPatchOut(p)],
    ['session_patch_example_total_cost.json', 'ocpi-2.1.1/session.json', (p) => v211.sessionPatchOut(p)],
    ['token_patch_example.json', 'ocpi-2.1.1/token.json', (p) => v211.tokenPatchOut(p)],
  ];
  for (const [file, schema, out] of cases) {
    it(`${file} is a valid 2.1.1 PATCH`, () => {
      const sent = patch(file);
      assertValid(schema.replace('ocpi-2.1.1/', 'ocpi/'), sent, true);
      const translated = out(sent);
      assertValid(schema, translated, true);
      assert.ok(Object.keys(translated).length > 0);
    });
  }

  it('the tariff PATCH is tariff_id, the total_cost PATCH a number', () => {
    assert.deepEqual(v211.connectorPatchOut(patch('location_patch_example_tariff.json')), { tariff_id: (example221('location_patch_example_tariff.json') as { tariff_ids: string[] }).tariff_ids[0], last_updated: (example221('location_patch_example_tariff.json') as { last_updated: string }).last_updated });
    const cost = example221('session_patch_example_total_cost.json') as { total_cost: { excl_vat: number } };
    assert.equal((v211.sessionPatchOut(patch('session_patch_example_total_cost.json')) as { total_cost: number }).total_cost, cost.total_cost.excl_vat);
  });
});
