// kafkajs ships no types for its protocol error table; only what kafka-event-log.ts reads of it.
declare module 'kafkajs/src/protocol/error.js' {
  const protocolErrors: { readonly errorCodes: ReadonlyArray<{ readonly type: string; readonly code: number; readonly retriable: boolean; readonly message: string }> };
  export default protocolErrors;
}
