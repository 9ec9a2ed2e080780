// Ingress: the partner-facing OCPI API. The only place that reads process.env.
import { runService } from '@hub/observability';
import { readIngressConfig } from './config.ts';
import { startIngress } from './start.ts';

await runService(() => startIngress(readIngressConfig(process.env)));
