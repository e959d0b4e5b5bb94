/*
 * Big tables made by Iceberg Java 1.10.2 itself, and Iceberg Java's own scan planning of them
 * (the baseline of benchmarks/bench_scale.py and the truth of tests/test_interop_scale.py).
 * Compiled and run by tests/interop/scale.py; see tests/interop/README.md.
 *
 *   java ScaleTables build DIR FILES APPENDS DVS PUFFINS METRICS
 *       A format 3 table at DIR (Hadoop tables: DIR/metadata/v*.metadata.json) partitioned by
 *       identity(part) (100 partitions): FILES data files (never written: these commands do
 *       not open them) added in APPENDS appends, then DVS deletion vectors in PUFFINS Puffin
 *       files written by Iceberg's BaseDVFileWriter, all added in one row delta. DV k deletes
 *       1 + k % 5 rows of data file k * (FILES / DVS). METRICS > 0: every data file entry has
 *       column metrics (sizes, value, null and NaN counts, lower and upper bounds) for METRICS
 *       long columns.
 *   java ScaleTables plan DIR [OUT]
 *       table.newScan().planFiles() of the current snapshot iterated to the end; prints
 *       {"files": N, "deletes": M, "planning-ms": T}. With OUT: one line per data file,
 *       sorted: path, then for each delete file of its task "path@offset+size:records".
 */

import java.io.BufferedWriter;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.hadoop.conf.Configuration;
import org.apache.iceberg.AppendFiles;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.DataFiles;
import org.apache.iceberg.DeleteFile;
import org.apache.iceberg.FileFormat;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.Metrics;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.RowDelta;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Table;
import org.apache.iceberg.deletes.BaseDVFileWriter;
import org.apache.iceberg.hadoop.HadoopTables;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.types.Conversions;
import org.apache.iceberg.types.Types;

public class ScaleTables {
  private static final int PARTITIONS = 100;
  private static final int METRIC_BASE_ID = 3;

  public static void main(String[] args) throws Exception {
    if (args[0].equals("build")) {
      build(args[1], Integer.parseInt(args[2]), Integer.parseInt(args[3]),
          Integer.parseInt(args[4]), Integer.parseInt(args[5]), Integer.parseInt(args[6]));
    } else if (args[0].equals("plan")) {
      plan(args[1], args.length > 2 ? args[2] : null);
    } else {
      throw new IllegalArgumentException("usage: build DIR FILES APPENDS DVS PUFFINS METRICS | plan DIR [OUT]");
    }
  }

  private static Schema schema(int metrics) {
    List<Types.NestedField> fields = new ArrayList<>();
    fields.add(Types.NestedField.required(1, "id", Types.LongType.get()));
    fields.add(Types.NestedField.required(2, "part", Types.IntegerType.get()));
    for (int c = 0; c < Math.max(metrics, 1); c++) {
      fields.add(Types.NestedField.optional(METRIC_BASE_ID + c, "c" + c, Types.LongType.get()));
    }
    return new Schema(fields);
  }

  private static Metrics metrics(long rows, long n, int columns) {
    Map<Integer, Long> sizes = new HashMap<>();
    Map<Integer, Long> values = new HashMap<>();
    Map<Integer, Long> nulls = new HashMap<>();
    Map<Integer, Long> nans = new HashMap<>();
    Map<Integer, ByteBuffer> lower = new HashMap<>();
    Map<Integer, ByteBuffer> upper = new HashMap<>();
    for (int c = 0; c < columns; c++) {
      int id = METRIC_BASE_ID + c;
      sizes.put(id, 8 * rows + c);
      values.put(id, rows);
      nulls.put(id, n % 7);
      nans.put(id, 0L);
      lower.put(id, Conversions.toByteBuffer(Types.LongType.get(), n * 1000 + c));
      upper.put(id, Conversions.toByteBuffer(Types.LongType.get(), n * 1000 + c + rows));
    }
    return new Metrics(rows, sizes, values, nulls, nans, lower, upper);
  }

  private static void build(String dir, int files, int appends, int dvs, int puffins, int metrics)
      throws Exception {
    Schema schema = schema(metrics);
    PartitionSpec spec = PartitionSpec.builderFor(schema).identity("part").build();
    Map<String, String> props = new HashMap<>();
    props.put("format-version", "3");
    props.put("write.metadata.compression-codec", "none");
    Table table = new HadoopTables(new Configuration()).create(schema, spec, props, dir);
    int step = dvs > 0 ? files / dvs : 0;
    List<DataFile> referenced = new ArrayList<>();
    int perAppend = files / appends;
    for (int a = 0; a < appends; a++) {
      AppendFiles append = table.newAppend();
      int last = a == appends - 1 ? files : (a + 1) * perAppend;
      for (int n = a * perAppend; n < last; n++) {
        int part = n % PARTITIONS;
        long rows = 1000 + n % 100;
        DataFiles.Builder builder = DataFiles.builder(spec)
            .withPath(table.location() + "/data/part=" + part + "/f-" + n + ".parquet")
            .withFormat(FileFormat.PARQUET)
            .withFileSizeInBytes(100000 + n % 1000)
            .withPartitionPath("part=" + part);
        if (metrics > 0) {
          builder.withMetrics(metrics(rows, n, metrics));
        } else {
          builder.withRecordCount(rows);
        }
        DataFile file = builder.build();
        append.appendFile(file);
        if (step > 0 && n % step == 0 && referenced.size() < dvs) {
          referenced.add(file);
        }
      }
      append.commit();
    }
    if (dvs == 0) {
      return;
    }
    RowDelta delta = table.newRowDelta();
    int perPuffin = (dvs + puffins - 1) / puffins;
    for (int p = 0; p < puffins; p++) {
      String path = table.location() + "/data/dvs-" + p + ".puffin";
      BaseDVFileWriter writer = new BaseDVFileWriter(
          () -> table.io().newOutputFile(path), previous -> null);
      for (int k = p * perPuffin; k < Math.min(dvs, (p + 1) * perPuffin); k++) {
        DataFile file = referenced.get(k);
        for (int pos = 0; pos <= k % 5; pos++) {
          writer.delete(file.location(), pos * 3L, spec, file.partition());
        }
      }
      writer.close();
      for (DeleteFile dv : writer.result().deleteFiles()) {
        delta.addDeletes(dv);
      }
    }
    delta.commit();
  }

  private static void plan(String dir, String out) throws Exception {
    long started = System.nanoTime();
    Table table = new HadoopTables(new Configuration()).load(dir);
    long files = 0;
    long deletes = 0;
    List<String> lines = out == null ? null : new ArrayList<>();
    try (CloseableIterable<FileScanTask> tasks = table.newScan().planFiles()) {
      for (FileScanTask task : tasks) {
        files++;
        deletes += task.deletes().size();
        if (lines != null) {
          List<String> refs = new ArrayList<>();
          for (DeleteFile d : task.deletes()) {
            refs.add(d.location() + "@" + d.contentOffset() + "+" + d.contentSizeInBytes() + ":"
                + d.recordCount());
          }
          Collections.sort(refs);
          lines.add(task.file().location() + (refs.isEmpty() ? "" : "\t" + String.join("\t", refs)));
        }
      }
    }
    long millis = (System.nanoTime() - started) / 1_000_000;
    if (lines != null) {
      Collections.sort(lines);
      try (BufferedWriter w = Files.newBufferedWriter(Paths.get(out), StandardCharsets.UTF_8)) {
        for (String line : lines) {
          w.write(line);
          w.write('\n');
        }
      }
    }
    System.out.println("{\"files\": " + files + ", \"deletes\": " + deletes + ", \"planning-ms\": "
        + millis + "}");
  }
}
