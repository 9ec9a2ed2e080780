import { connect, createServer, type Server, type Socket } from 'node:net';

// A TCP relay a fault test owns in front of a real server (Postgres): closing it is "the server went
// away" for whoever connects through it (every connection cut, new ones refused), while the shared
// server itself stays untouched for the other tests. Loopback only.

export interface TcpRelay {
  /** The loopback port to connect to instead of the target's. */
  readonly port: number;
  /** Cuts every relayed connection and refuses new ones. */
  close(): Promise<void>;
  /** Accepts and relays connections again, on the same port. */
  open(): Promise<void>;
}

export async function startTcpRelay(target: { host: string; port: number }): Promise<TcpRelay> {
  const sockets = new Set<Socket>();
  let server: Server | undefined;
  let port = 0;
  const open = () =>
    new Promise<void>((resolve, reject) => {
      const s = createServer((client) => {
        const upstream = connect(target.port, target.host);
        for (const socket of [client, upstream]) {
          sockets.add(socket);
          socket.on('error', () => undefined);
          socket.on('close', () => (sockets.delete(socket), client.destroy(), upstream.destroy()));
        }
        client.pipe(upstream).pipe(client);
      });
      s.once('error', reject);
      s.listen(port, '127.0.0.1', () => {
        const address = s.address();
        port = typeof address === 'object' && address ? address.port : port;
        server = s;
        resolve();
      });
    });
  const close = async () => {
    const closed = new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
    for (const s of sockets) s.destroy();
    await closed;
    server = undefined;
  };
  await open();
  return {
    get port() {
      return port;
    },
    close,
    open,
  };
}
