// The broker's logging configuration: its own log in a file, and on request every request it served.
// Kafka 4 logs through log4j2 (log4j2.properties, -Dlog4j2.configurationFile); Kafka 3 through
// reload4j (log4j.properties, -Dlog4j.configuration). Both write the same server.log lines.

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

const LOG4J2 = [
  'status=warn',
  'name=hub-kafka-broker',
  'appender.file.type=File',
  'appender.file.name=file',
  'appender.file.fileName=${sys:kafka.logs.dir}/server.log',
  'appender.file.layout.type=PatternLayout',
  'appender.file.layout.pattern=[%d] %p %m (%c)%n',
  'rootLogger.level=INFO',
  'rootLogger.appenderRef.file.ref=file',
  'logger.kafka.name=kafka',
  'logger.kafka.level=INFO',
  'logger.apachekafka.name=org.apache.kafka',
  'logger.apachekafka.level=INFO',
  'logger.statechange.name=state.change.logger',
  'logger.statechange.level=WARN',
  '',
].join('\n');

/**
 * BENCH_KAFKA_REQUEST_LOG=FILE: the broker logs every request it completes (API, client id) to FILE,
 * for counting what a benchmark's clients ask of it (bench/README.md). Costs the broker CPU.
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

function requestLog2(file: string | undefined): string {
  if (!file) return '';
  return [
    'appender.requests.type=File',
    'appender.requests.name=requests',
    `appender.requests.fileName=${file}`,
    'appender.requests.layout.type=PatternLayout',
    'appender.requests.layout.pattern=[%d{ISO8601}] %m%n',
    'logger.request.name=kafka.request.logger',
    'logger.request.level=DEBUG',
    'logger.request.additivity=false',
    'logger.request.appenderRef.requests.ref=requests',
    '',
  ].join('\n');
}

export interface BrokerLogging {
  /** The file name the configuration is written to, in the broker's home. */
  readonly file: string;
  readonly text: string;
  /** The JVM system property that points the broker at that file. */
  jvmFlag(path: string): string;
}

/** The logging configuration of a broker of this major version; `requestLogFile` adds the request log (BENCH_KAFKA_REQUEST_LOG). */
export function brokerLogging(major: number, requestLogFile: string | undefined): BrokerLogging {
  if (major >= 4) return { file: 'log4j2.properties', text: LOG4J2 + requestLog2(requestLogFile), jvmFlag: (p) => `-Dlog4j2.configurationFile=file:${p}` };
  return { file: 'log4j.properties', text: LOG4J + requestLog(requestLogFile), jvmFlag: (p) => `-Dlog4j.configuration=file:${p}` };
}
