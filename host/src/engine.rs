//! The wasmtime engine every extension shares, and the epoch ticker that enforces timeouts.

use std::sync::mpsc;
use std::thread::JoinHandle;
use std::time::Duration;

use wasmtime::{Config, Enabled, Engine, InstanceAllocationStrategy, PoolingAllocationConfig};

use crate::config::HostConfig;
use crate::error::HostError;

/// Builds the engine: component model, fuel metering, epoch interruption, a bounded wasm stack
/// and (by default) the pooling allocator sized from `config`.
pub(crate) fn build_engine(config: &HostConfig) -> Result<Engine, HostError> {
    let mut wasm = Config::new();
    wasm.wasm_component_model(true)
        // Extensions use synchronous component exports; the component-model-async machinery is
        // not needed, and leaving it out makes every fresh Store cheaper.
        .concurrency_support(false)
        .consume_fuel(true)
        .epoch_interruption(true)
        .max_wasm_stack(config.max_wasm_stack_bytes)
        // Host calls made from wasm (WASI, state) run on the same fiber stack as the guest.
        .async_stack_size(config.max_wasm_stack_bytes + 1024 * 1024);

    if config.pooling.enabled {
        let pool = &config.pooling;
        let mut pooling = PoolingAllocationConfig::new();
        pooling
            .total_component_instances(pool.total_component_instances)
            .total_core_instances(pool.total_core_instances)
            .total_memories(pool.total_memories)
            .total_tables(pool.total_tables)
            .total_stacks(pool.total_stacks)
            .max_core_instances_per_component(pool.max_core_instances_per_component)
            .max_memories_per_component(pool.max_memories_per_component)
            .max_tables_per_component(pool.max_tables_per_component)
            .table_elements(pool.table_elements)
            .max_unused_warm_slots(pool.max_unused_warm_slots)
            .linear_memory_keep_resident(pool.memory_keep_resident_bytes)
            .table_keep_resident(pool.table_keep_resident_bytes)
            .pagemap_scan(if pool.pagemap_scan {
                Enabled::Auto
            } else {
                Enabled::No
            })
            // The memory cap of every extension is at most the operator's limit for it, so no
            // slot ever needs to be larger than the largest of those.
            .max_memory_size(config.max_memory_bytes());
        wasm.allocation_strategy(InstanceAllocationStrategy::Pooling(pooling));
    }

    Engine::new(&wasm).map_err(|error| HostError::Engine(format!("{error:#}")))
}

/// A thread that advances the engine's epoch every tick, so that a guest stuck in a loop reaches
/// its epoch deadline. Stops (promptly) when dropped.
pub(crate) struct EpochTicker {
    stop: Option<mpsc::Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl EpochTicker {
    pub(crate) fn start(engine: Engine, tick: Duration) -> Result<Self, HostError> {
        let (stop, stopped) = mpsc::channel::<()>();
        let thread = std::thread::Builder::new()
            .name("aeterna-epoch".into())
            .spawn(move || {
                while let Err(mpsc::RecvTimeoutError::Timeout) = stopped.recv_timeout(tick) {
                    engine.increment_epoch();
                }
            })
            .map_err(|error| {
                HostError::Engine(format!("cannot start the epoch thread: {error}"))
            })?;
        Ok(Self {
            stop: Some(stop),
            thread: Some(thread),
        })
    }
}

impl Drop for EpochTicker {
    fn drop(&mut self) {
        drop(self.stop.take()); // disconnects the channel: the thread wakes up and exits
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}
