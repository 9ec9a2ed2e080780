// A token's object id in the hub (read-model row, delivery row, Kafka key and subject): "uid|TYPE".
// mod_tokens.asciidoc, Token object: a uid is unique per type only (an RFID and an APP_USER token may
// share one), and the type defaults to RFID when a request omits it (GET and PATCH ?type=). A TokenType
// never holds '|', so the last '|' splits the id back even when a uid holds one.

export const DEFAULT_TOKEN_TYPE = 'RFID';

export function tokenObjectId(uid: string, type: string | undefined): string {
  return `${uid}|${(type ?? DEFAULT_TOKEN_TYPE).toUpperCase()}`;
}

export function splitTokenObjectId(objectId: string): { uid: string; type: string } {
  const at = objectId.lastIndexOf('|');
  return at < 0 ? { uid: objectId, type: DEFAULT_TOKEN_TYPE } : { uid: objectId.slice(0, at), type: objectId.slice(at + 1) };
}
