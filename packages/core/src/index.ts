// The hub's core (reference design, Layout): every port, the records that cross them, and the domain
// rules with no I/O. Adapters (event-log, store, partners) implement these ports; services use them.
// Nothing here does I/O or imports a driver (eslint.config.js keeps it so).
export {};
