//! A `prof_scope!` guard held across `.await` would time the wrong thread's
//! stack if the task migrated: the guard is not `Send`, so a future that
//! must be `Send` cannot hold it. Use `#[profile] async fn` instead.

async fn other() {}

async fn holds_guard_across_await() {
    tickprof::prof_scope!("io");
    other().await;
}

fn require_send<T: Send>(_: T) {}

fn main() {
    require_send(holds_guard_across_await());
}
