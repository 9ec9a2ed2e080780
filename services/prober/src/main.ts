// Prober: partner health. The only place that reads process.env.
import { runService } from '@hub/observability';
import { readProberConfig } from './config.ts';
import { startProber } from './prober.ts';

await runService(() => startProber(readProberConfig(process.env)));
