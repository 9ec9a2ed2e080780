// The broker's log4j configuration: its own log in a file, and on request every request it served.

const LOG4J = [
  'log4j.rootLogger=INFO, file',
  'log4j.appender.file=org.apache.log4j.FileAppender',
  'log4j.appender.file.File=${kafka.logs.dir}/server.log',
  'log4j.appender.file.layout=org.apache.log4j.PatternLayout',
  'log4j.appender.file.layout.ConversionPattern=[%d] %p %m (%c)%n',
  'log4j.logger.kafka=INFO',
  'log4j.logger.org.apache.kafka=INFO',
  'log4j.logger.state.change.logger=WARN',
  '',
].join('\n');

/**
 * BENCH_KAFKA_REQUEST_LOG=FILE: the broker logs every request it completes (API, client id) to FILE,
 * for counting what a benchmark's clients ask of it (README, Benchmarks). Costs the broker CPU.
 */
function requestLog(file: string | undefined): string {
  if (!file) return '';
  return [
    'log4j.logger.kafka.request.logger=DEBUG, requests',
    'log4j.additivity.kafka.request.logger=false',
    'log4j.appender.requests=org.apache.log4j.FileAppender',
    `log4j.appender.requests.File=${file}`,
    'log4j.appender.requests.layout=org.apache.log4j.PatternLayout',
    'log4j.appender.requests.layout.ConversionPattern=[%d{ISO8601}] %m%n',
    '',
  ].join('\n');
}

/** The log4j.properties of a broker; `requestLogFile` adds the request log (BENCH_KAFKA_REQUEST_LOG). */
export function brokerLog4j(requestLogFile: string | undefined): string {
  return LOG4J + requestLog(requestLogFile);
}
