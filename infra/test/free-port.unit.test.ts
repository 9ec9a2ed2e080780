// freePort (stack/proc.ts): a port handed to a service about to start is one no outgoing connection
// can take first (below the kernel's ephemeral range) and one no other test process draws at once.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { describe, it } from 'node:test';
import { freePort } from '../stack/proc.ts';

const ephemeralStart = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);

describe('freePort', () => {
  it('draws ports below the ephemeral range, each one a server can listen on, none twice', async () => {
    const ports: number[] = [];
    for (let i = 0; i < 40; i++) ports.push(await freePort());
    assert.equal(new Set(ports).size, ports.length);
    for (const port of ports) assert.ok(port >= 1024 && port < ephemeralStart, `${port} is below ${ephemeralStart}`);
    for (const port of ports.slice(0, 5)) {
      await new Promise<void>((resolve, reject) => {
        const server = createServer().once('error', reject);
        server.listen(port, '127.0.0.1', () => server.close(() => resolve()));
      });
    }
  });

});
