// Package docker holds kconform's image recipes (a JRE base made from Debian
// packages, and one Kafka image per version made from Maven Central jars) and
// builds them on demand, so no image registry is ever needed.
//
// In the flow: the images behind the **cluster**, built offline.
package docker
