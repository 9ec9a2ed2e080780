// EVSE and Connector between OCPI 2.1.1 (mod_locations.md 3.2, 3.3) and 2.2.1 (mod_locations.asciidoc 8.3.2, 8.3.3).
import type { Connector, Evse, Patch } from '../canonical.ts';
import { NotRepresentableError } from '../errors.ts';
import { compact, nonEmpty } from '../version-fields.ts';
import type * as W from './types.ts';

type Capability211 = NonNullable<W.Evse['capabilities']>[number];
type Standard211 = W.Connector['standard'];
type Power211 = W.Connector['power_type'];

const CAPABILITIES_211: ReadonlySet<string> = new Set<Capability211>(['CHARGING_PROFILE_CAPABLE', 'CREDIT_CARD_PAYABLE', 'REMOTE_START_STOP_CAPABLE', 'RESERVABLE', 'RFID_READER', 'UNLOCK_CAPABLE']);
const STANDARDS_211: ReadonlySet<string> = new Set<Standard211>(['CHADEMO', 'DOMESTIC_A', 'DOMESTIC_B', 'DOMESTIC_C', 'DOMESTIC_D', 'DOMESTIC_E', 'DOMESTIC_F', 'DOMESTIC_G', 'DOMESTIC_H', 'DOMESTIC_I', 'DOMESTIC_J', 'DOMESTIC_K', 'DOMESTIC_L', 'IEC_60309_2_single_16', 'IEC_60309_2_three_16', 'IEC_60309_2_three_32', 'IEC_60309_2_three_64', 'IEC_62196_T1', 'IEC_62196_T1_COMBO', 'IEC_62196_T2', 'IEC_62196_T2_COMBO', 'IEC_62196_T3A', 'IEC_62196_T3C', 'TESLA_R', 'TESLA_S']);
/** mod_locations.md 4.18 has no two-phase power: AC_2_PHASE and AC_2_PHASE_SPLIT become AC_1_PHASE (lossy; never claims more power than there is). */
const POWER_TYPE: Readonly<Record<Connector['power_type'], Power211>> = { AC_1_PHASE: 'AC_1_PHASE', AC_2_PHASE: 'AC_1_PHASE', AC_2_PHASE_SPLIT: 'AC_1_PHASE', AC_3_PHASE: 'AC_3_PHASE', DC: 'DC' };

/** Every 2.1.1 EVSE field has the same name and values in 2.2.1; its connectors map one by one. */
export function evseIn(evse: W.Evse): Evse {
  return { ...evse, connectors: nonEmpty(evse.connectors.map(connectorIn)) };
}

/**
 * The canonical EVSE as 2.1.1: capabilities 2.1.1 has no value for are left out, and so are
 * connectors it cannot name (connectorOut); an EVSE left without connectors (2.1.1 requires one,
 * mod_locations.md 3.2) is not representable.
 */
export function evseOut(evse: Evse): W.Evse {
  const connectors = evse.connectors.flatMap((c) => connectorOutOrSkip(c));
  if (connectors.length === 0) throw new NotRepresentableError('2.1.1', 'EVSE', `${evse.uid}: no connector with a 2.1.1 standard`);
  return compact({ ...evse, capabilities: capabilitiesOut(evse.capabilities), connectors: nonEmpty(connectors) });
}

/** evseOut, or nothing for an EVSE 2.1.1 cannot represent (inside a Location it is left out). */
export function evseOutOrSkip(evse: Evse): W.Evse[] {
  try {
    return [evseOut(evse)];
  } catch {
    return [];
  }
}

function capabilitiesOut(capabilities: Evse['capabilities']): W.Evse['capabilities'] {
  if (!capabilities) return undefined;
  const kept = capabilities.filter((c) => CAPABILITIES_211.has(c)) as Capability211[];
  return kept.length === 0 && capabilities.length > 0 ? undefined : kept;
}

/** voltage and amperage are max_voltage and max_amperage in 2.2.1; the one tariff_id is a list of one. */
export function connectorIn(connector: W.Connector): Connector {
  const { voltage, amperage, tariff_id, ...same } = connector;
  return compact({ ...same, max_voltage: voltage, max_amperage: amperage, tariff_ids: tariff_id === undefined ? undefined : [tariff_id] });
}

/**
 * The canonical connector as 2.1.1: the first of tariff_ids is the tariff_id (2.1.1 has one tariff per
 * connector), max_electric_power is dropped, two-phase power is AC_1_PHASE. A standard 2.1.1 has no
 * value for (mod_locations.md 4.4: CHAOJI, DOMESTIC_M to O, GBT_*, NEMA_*, PANTOGRAPH_*) is not representable.
 */
export function connectorOut(connector: Connector): W.Connector {
  const { max_voltage, max_amperage, max_electric_power: _m, tariff_ids, standard, power_type, ...same } = connector;
  if (!STANDARDS_211.has(standard)) throw new NotRepresentableError('2.1.1', 'Connector', `${connector.id}: standard ${standard}`);
  return compact({ ...same, standard: standard as Standard211, power_type: POWER_TYPE[power_type], voltage: max_voltage, amperage: max_amperage, tariff_id: tariff_ids?.[0] });
}

function connectorOutOrSkip(connector: Connector): W.Connector[] {
  return STANDARDS_211.has(connector.standard) ? [connectorOut(connector)] : [];
}

export function evsePatchIn(patch: Patch<W.Evse>): Patch<Evse> {
  const { connectors, ...same } = patch;
  return connectors === undefined ? same : { ...same, connectors: connectors && nonEmpty(connectors.map(connectorIn)) };
}

export function evsePatchOut(patch: Patch<Evse>): Patch<W.Evse> {
  const { connectors, capabilities, ...same } = patch;
  const out: Patch<W.Evse> = { ...same };
  if (connectors !== undefined) out.connectors = connectors && nonEmpty(connectors.flatMap((c) => connectorOutOrSkip(c)));
  if (capabilities !== undefined) out.capabilities = capabilities && (capabilitiesOut(capabilities) ?? null);
  return out;
}

/** mod_locations.md 2.2.3 (set tariff update): a PATCH with tariff_id is tariff_ids of that one id; null removes them. */
export function connectorPatchIn(patch: Patch<W.Connector>): Patch<Connector> {
  const { voltage, amperage, tariff_id, ...same } = patch;
  const out: Patch<Connector> = { ...same };
  if (voltage !== undefined) out.max_voltage = voltage;
  if (amperage !== undefined) out.max_amperage = amperage;
  if (tariff_id !== undefined) out.tariff_ids = tariff_id === null ? null : [tariff_id];
  return out;
}

export function connectorPatchOut(patch: Patch<Connector>): Patch<W.Connector> {
  const { max_voltage, max_amperage, max_electric_power: _m, tariff_ids, standard, power_type, ...same } = patch;
  const out: Patch<W.Connector> = { ...same };
  if (max_voltage !== undefined) out.voltage = max_voltage;
  if (max_amperage !== undefined) out.amperage = max_amperage;
  if (tariff_ids !== undefined) out.tariff_id = tariff_ids?.[0] ?? null;
  if (power_type) out.power_type = POWER_TYPE[power_type];
  if (standard) {
    if (!STANDARDS_211.has(standard)) throw new NotRepresentableError('2.1.1', 'Connector PATCH', `standard ${standard}`);
    out.standard = standard as Standard211;
  }
  return out;
}
