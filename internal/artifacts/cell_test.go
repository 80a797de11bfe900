package artifacts

import "testing"

// A run that stopped before writing run.json is placed by its folder: a
// real-time run's folder names the scenario and the client's defaults,
// not a scenario called "...-real-time".
func TestCellOfARunWithoutRunJSON(t *testing.T) {
	for name, want := range map[string]Cell{
		"seed-real-time-run2": {Kafka: "4.4.0", Mode: "kraft", Client: "kafkajs", Scenario: "seed", ClientDefaults: true},
		"seed-run1":           {Kafka: "4.4.0", Mode: "kraft", Client: "kafkajs", Scenario: "seed"},
	} {
		got := RunFolder{KafkaMode: "4.4.0-kraft", Client: "kafkajs", Name: name}.Cell()
		if got.Key() != want.Key() || got.Scenario != want.Scenario || got.ClientDefaults != want.ClientDefaults {
			t.Errorf("%s: cell %+v, want %+v", name, got, want)
		}
	}
	if got := (RunFolder{KafkaMode: "2.8.2-zk", Client: "librdkafka_1.9.0", Name: "seed"}).Cell(); got.Client != "librdkafka@1.9.0" {
		t.Errorf("another release's folder: client %q, want librdkafka@1.9.0", got.Client)
	}
}
