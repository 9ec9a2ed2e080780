// The personal fields of a driver's Token (mod_tokens.asciidoc, Token object): uid, visual_number,
// contract_id, group_id, and the contract of its energy_contract; not issuer nor the supplier_name
// (companies). docs/decisions/0013-erasure-by-destroying-data-keys.md, Fields covered. A command
// request carries the same Token (commands/module.ts).
export const TOKEN_PERSONAL_FIELDS = [['uid'], ['visual_number'], ['contract_id'], ['group_id'], ['energy_contract', 'contract_id']] as const;
