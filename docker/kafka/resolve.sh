#!/usr/bin/env bash
# resolve.sh <version> <dest> [artifact] copies org.apache.kafka:<artifact>
# (default kafka_2.13, the broker; kafka-tools for the java driver) at
# <version>, its runtime dependencies and the logging backend its POM leaves
# out into <dest>/libs, using Maven against Maven Central. The result is
# cached: a second call for the same version returns at once.
set -euo pipefail
version=$1 dest=$2 artifact=${3:-kafka_2.13}
log() { printf 'kconform: %s\n' "$*" >&2; }

if [ -f "$dest/.complete" ]; then exit 0; fi
command -v mvn >/dev/null 2>&1 || { log "mvn is missing: install Maven 3 (apt-get install maven) to build Kafka images"; exit 1; }

major=${version%%.*}; rest=${version#*.}; minor=${rest%%.*}
# The Kafka POM declares slf4j-api only; the backend it ships in its tarball
# changed over time, so pick the one each line was released with.
if [ "$major" -ge 4 ]; then
  backend='<dependency><groupId>org.apache.logging.log4j</groupId><artifactId>log4j-core</artifactId><version>2.24.3</version></dependency>
<dependency><groupId>org.apache.logging.log4j</groupId><artifactId>log4j-slf4j-impl</artifactId><version>2.24.3</version></dependency>'
elif [ "$major" -eq 3 ] && [ "$minor" -ge 2 ]; then
  backend='<dependency><groupId>ch.qos.reload4j</groupId><artifactId>reload4j</artifactId><version>1.2.25</version></dependency>
<dependency><groupId>org.slf4j</groupId><artifactId>slf4j-reload4j</artifactId><version>1.7.36</version></dependency>'
else
  backend='<dependency><groupId>log4j</groupId><artifactId>log4j</artifactId><version>1.2.17</version></dependency>
<dependency><groupId>org.slf4j</groupId><artifactId>slf4j-log4j12</artifactId><version>1.7.30</version></dependency>'
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cat >"$work/pom.xml" <<POM
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>org.kconform</groupId><artifactId>kafka-image</artifactId><version>1</version>
  <packaging>pom</packaging>
  <dependencies>
    <dependency><groupId>org.apache.kafka</groupId><artifactId>$artifact</artifactId><version>$version</version></dependency>
    $backend
  </dependencies>
</project>
POM
mkdir -p "$dest/libs"
log "resolving $artifact:$version and its runtime dependencies from Maven Central..."
if ! mvn -B -q -f "$work/pom.xml" \
      org.apache.maven.plugins:maven-dependency-plugin:3.6.1:copy-dependencies \
      -DincludeScope=runtime -DoutputDirectory="$dest/libs" >"$work/mvn.log" 2>&1; then
  if grep -q "$artifact:jar:$version" "$work/mvn.log" || grep -q "$artifact:pom:$version" "$work/mvn.log"; then
    log "Kafka $version is not on Maven Central (org.apache.kafka:$artifact:$version): pick a released version, e.g. 2.8.2, 3.9.1 or 4.1.1"
  else
    log "Maven could not resolve Kafka $version: $(grep -m1 ERROR "$work/mvn.log" | cut -c1-300); check that Maven Central is reachable"
  fi
  rm -rf "$dest"
  exit 1
fi
touch "$dest/.complete"
log "resolved $(ls "$dest/libs" | wc -l) jars for $artifact $version"
