// The baseline for ratios: a bare express "hello" on the same machine, same Node.
import express from 'express';

const app = express();
app.disable('x-powered-by');
app.disable('etag');
app.get('/hello', (_req, res) => {
  res.json({ hello: 'world' });
});
const server = app.listen(Number(process.argv[2] ?? 0), '127.0.0.1', () => {
  const address = server.address();
  process.stdout.write(`listening ${typeof address === 'object' && address ? address.port : 0}\n`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
