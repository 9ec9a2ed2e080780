import { connect, createServer, type Server, type Socket } from 'node:net';

// A TCP relay a fault test owns in front of a real server (Postgres): closing it is "the server went
// away" for whoever connects through it (every connection cut, new ones refused), while the shared
// server itself stays untouched for the other tests. Holding it is "the server hung": connections stay
// open (new ones are accepted) but no byte goes through either way until it is released. Loopback only.

export interface TcpRelay {
  /** The loopback port to connect to instead of the target's. */
  readonly port: number;
  /** Cuts every relayed connection and refuses new ones. */
  close(): Promise<void>;
  /** Accepts and relays connections again, on the same port. */
  open(): Promise<void>;
  /** Stops relaying bytes, both ways, on every connection (kept, with what they send, until release). */
  hold(): void;
  /** Delivers what was held back, in order, and relays again. */
  release(): void;
}

export async function startTcpRelay(target: { host: string; port: number }): Promise<TcpRelay> {
  const sockets = new Set<Socket>();
  let held = false;
  const heldBack: Array<{ to: Socket; chunk: Buffer }> = [];
  const forward = (from: Socket, to: Socket) =>
    from.on('data', (chunk: Buffer) => {
      if (held) heldBack.push({ to, chunk });
      else to.write(chunk);
    });
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
        forward(client, upstream);
        forward(upstream, client);
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
    hold() {
      held = true;
    },
    release() {
      held = false;
      for (const { to, chunk } of heldBack.splice(0)) if (!to.destroyed) to.write(chunk);
    },
  };
}
