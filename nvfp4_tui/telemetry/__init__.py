"""GPU and server telemetry sources: NVML, Prometheus /metrics, DCGM exporter, simulator."""
